package powerfamily

import (
	"context"
	"fmt"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// send stores a message from principal from to principal to through the
// engine's Messages API, from a tool call made for from (as memory_notify
// of the other family does).
func (h *harness) send(from, to, title string) {
	h.t.Helper()
	notify := sdk.Family{Name: "other", Tools: []sdk.Tool{{Name: "test_notify", Description: "test", Schema: schema(`{"type":"object"}`),
		Handler: func(ctx context.Context, _ sdk.Call) (any, error) {
			_, err := h.eng.SendMessage(ctx, &aimemoryv1.SendMessageRequest{To: to, Title: title, Payload: title + " payload"})
			return map[string]string{}, err
		}}}}
	f := sdktest.NewFamily(h.t, "other", []sdk.Family{notify}).WithEngine(h.eng)
	f.AgentID = from
	f.OK("test_notify", `{}`, nil)
}

func TestInbox(t *testing.T) {
	h := newHarness(t)
	for i := range 3 {
		h.send("ai:alice", "ai:test", fmt.Sprint("m", i))
	}
	h.send("ai:alice", "ai:other", "not yours")

	var got inboxResult
	h.OK("memory_inbox", `{}`, &got)
	if got.Count != 3 || got.Unread != 3 || got.Messages[0].From != "ai:alice" || got.Messages[0].Payload == "" || got.Messages[0].Read {
		t.Fatalf("inbox = %+v", got)
	}
	for _, m := range got.Messages {
		if m.Title == "not yours" {
			t.Fatalf("another identity's message: %+v", m)
		}
	}
	// mark_read marks what it returned; unread_only filters before the limit.
	got = inboxResult{}
	h.OK("memory_inbox", jsonArgs("limit", 1, "mark_read", true), &got)
	if got.Count != 1 || got.Read() != 0 {
		t.Fatalf("inbox limit 1 = %+v", got)
	}
	read := got.Messages[0].ID
	got = inboxResult{}
	h.OK("memory_inbox", jsonArgs("unread_only", true, "limit", 2), &got)
	if got.Count != 2 || got.Unread != 2 || got.Messages[0].ID == read || got.Messages[1].ID == read {
		t.Fatalf("unread_only limit 2 = %+v (read %s)", got, read)
	}
	got = inboxResult{}
	h.OK("memory_inbox", `{}`, &got)
	if got.Count != 3 || got.Read() != 1 {
		t.Fatalf("inbox after mark_read = %+v", got)
	}

	h.Fails("memory_inbox", jsonArgs("agent_id", "ai:other"), "agent_id: an inbox is read as the session identity")
	h.Fails("memory_inbox", jsonArgs("limit", 0), "limit")
	h.Fails("memory_inbox", jsonArgs("limit", 201), "limit")
	h.Fails("memory_inbox", jsonArgs("unread_only", "yes"), "unread_only")
	h.Fails("memory_inbox", jsonArgs("mark_read", 1), "mark_read")
	h.Fails("memory_inbox", jsonArgs("colour", "red"), "colour")
}

// Read counts the messages shown as read.
func (r inboxResult) Read() int {
	n := 0
	for _, m := range r.Messages {
		if m.Read {
			n++
		}
	}
	return n
}
