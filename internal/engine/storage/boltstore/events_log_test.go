package boltstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type publishedEvents struct{ got []*aimemoryv1.Event }

func (p *publishedEvents) Publish(e *aimemoryv1.Event) { p.got = append(p.got, e) }

func storeTitle(t *testing.T, s *Store, title string) *aimemoryv1.Memory {
	t.Helper()
	resp, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetMemory()
}

// Events are logged in their write's transaction, numbered in commit
// order, survive a reopen, and the published copy carries the same seq.
func TestEventLogIsDurableAndNumbered(t *testing.T) {
	pub := &publishedEvents{}
	s, _ := openTest(t, Options{Events: pub})
	a := storeTitle(t, s, "first")
	storeTitle(t, s, "second")
	if _, err := records.New(s).TouchMemories(storagetest.Operator(), &aimemoryv1.TouchMemoriesRequest{Ids: []string{a.GetId()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).DeleteMemories(storagetest.Operator(), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.GetId()}}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, Options{Events: pub})
	evs, err := s.EventsAfter(storagetest.Operator(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"memory_store", "memory_store", "memory_delete"} // no touch
	if len(evs) != len(want) {
		t.Fatalf("logged %d events %v, want %v", len(evs), evs, want)
	}
	for i, e := range evs {
		if e.GetType() != want[i] || e.GetSeq() != uint64(i+1) || e.GetTitle() == "" {
			t.Errorf("event %d = %v, want %s seq %d with a title", i, e, want[i], i+1)
		}
	}
	if last, _ := s.LastSeq(storagetest.Operator()); last != 3 {
		t.Errorf("LastSeq %d", last)
	}
	if tail, _ := s.EventsAfter(storagetest.Operator(), 2, 100); len(tail) != 1 || tail[0].GetSeq() != 3 {
		t.Errorf("resume after 2: %v", tail)
	}
	var seqs []uint64
	for _, e := range pub.got {
		seqs = append(seqs, e.GetSeq())
	}
	if len(seqs) != 4 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 0 || seqs[3] != 3 {
		t.Errorf("published seqs %v, want [1 2 0 3] (a touch is live only)", seqs)
	}
}

// A refused write logs nothing, and its seq is not used up.
func TestRefusedWriteLogsNoEvent(t *testing.T) {
	s, _ := openTest(t, Options{})
	storeTitle(t, s, "ok")
	_, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{Title: "x", Content: "c", Namespace: "_messages/bob"}})
	if !errors.Is(err, storage.ErrDenied) {
		t.Fatalf("guarded store: %v", err)
	}
	storeTitle(t, s, "ok too")
	evs, _ := s.EventsAfter(storagetest.Operator(), 0, 10)
	if len(evs) != 2 || evs[1].GetSeq() != 2 {
		t.Fatalf("events %v, want seqs 1 and 2", evs)
	}
}

func TestEventLogRetention(t *testing.T) {
	old := eventRetention
	eventRetention = 3
	defer func() { eventRetention = old }()
	s, _ := openTest(t, Options{})
	for _, title := range []string{"a", "b", "c", "d", "e"} {
		storeTitle(t, s, title)
	}
	evs, _ := s.EventsAfter(storagetest.Operator(), 0, 10)
	if len(evs) != 3 || evs[0].GetSeq() != 3 || evs[2].GetSeq() != 5 {
		t.Fatalf("retained %v, want seqs 3..5", evs)
	}
}

func as(p string) context.Context {
	return caller.NewContext(context.Background(), caller.Caller{Principal: p, Scope: caller.AllNamespaces})
}

// The inbox RPCs: a message is written from the caller into the
// recipient's inbox; only the recipient lists it; unread_only filters
// before the limit; mark_read marks what it returned.
func TestInbox(t *testing.T) {
	s, clock := openTest(t, Options{})
	send := func(from, to, title string) *aimemoryv1.Memory {
		t.Helper()
		clock.Add(time.Millisecond)
		resp, err := records.New(s).SendMessage(as(from), &aimemoryv1.SendMessageRequest{To: to, Title: title, Payload: "p " + title})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetMessage()
	}
	m1 := send("ai:alice", "ai:bob", "one")
	send("ai:carol", "ai:bob", "two")
	m3 := send("ai:alice", "ai:bob", "one") // same title: its own message, "one (2)" in the inbox
	if m3.GetId() == m1.GetId() || m3.GetTitle() != "one" {
		t.Fatalf("repeat title: %v, want a second message, answered with the title sent", m3)
	}
	if m1.GetNamespace() != "_messages/ai:bob" || m1.GetCreatedBy() != "ai:alice" || m1.GetSource() != "notify" {
		t.Fatalf("message %v", m1)
	}
	list := func(who string, req *aimemoryv1.ListInboxRequest) []string {
		t.Helper()
		resp, err := records.New(s).ListInbox(as(who), req)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, m := range resp.GetMessages() {
			titles = append(titles, m.GetTitle())
		}
		return titles
	}
	if got := list("ai:alice", &aimemoryv1.ListInboxRequest{}); len(got) != 0 {
		t.Fatalf("alice sees %v in her own (empty) inbox", got)
	}
	if got := list("ai:bob", &aimemoryv1.ListInboxRequest{Limit: 1, MarkRead: true}); len(got) != 1 || got[0] != "one (2)" {
		t.Fatalf("bob's newest: %v", got)
	}
	// unread_only filters first, then the limit: two unread remain.
	if got := list("ai:bob", &aimemoryv1.ListInboxRequest{UnreadOnly: true, Limit: 2}); len(got) != 2 || got[0] != "two" || got[1] != "one" {
		t.Fatalf("bob's unread: %v", got)
	}
	if got := list("ai:bob", &aimemoryv1.ListInboxRequest{}); len(got) != 3 {
		t.Fatalf("bob's inbox: %v", got)
	}
	// Ordinary reads of another's inbox return nothing.
	if resp, err := records.New(s).GetMemories(as("ai:alice"), &aimemoryv1.GetMemoriesRequest{Ids: []string{m1.GetId()}}); err == nil && len(resp.GetMemories()) != 0 {
		t.Fatalf("alice reads bob's message: %v", resp)
	}
	for _, tc := range []struct {
		ctx  context.Context
		req  *aimemoryv1.SendMessageRequest
		want string
	}{
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "../etc", Title: "t", Payload: "p"}, "to: must not contain '/' or '..'"},
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "bob/x", Title: "t", Payload: "p"}, "to: must not contain '/' or '..'"},
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: " "}, "payload:"},
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: "p", Priority: 11}, "priority"},
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: "p", Tier: "forever"}, "tier"},
		{context.Background(), &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: "p"}, "caller's identity"},
	} {
		if _, err := records.New(s).SendMessage(tc.ctx, tc.req); err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.req, err, tc.want)
		}
	}
	if _, err := records.New(s).ListInbox(context.Background(), &aimemoryv1.ListInboxRequest{}); err == nil {
		t.Error("an inbox listed without a caller")
	}
	if got := list("ai:bob", &aimemoryv1.ListInboxRequest{}); len(got) != 3 {
		t.Fatalf("refused sends changed bob's inbox: %v", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A write's webhook deliveries are queued in its own transaction: there
// when the write returns, with no dispatcher running; none for a refused
// write, for a filter that does not match, or for another's inbox.
func TestDeliveriesQueuedWithTheWrite(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := storagetest.Operator()
	for _, sub := range []*storage.Subscription{
		{ID: "all", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:alice", Scope: "*"},
		{ID: "proj", URL: "https://a.example/y", Events: []string{"memory_store"}, NamespaceFilter: "proj", CreatedBy: "ai:alice", Scope: "*"},
	} {
		if err := s.PutSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	storeTitle(t, s, "global one")
	if _, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "x", Content: "c", Namespace: "_agents"}}); err == nil {
		t.Fatal("guarded store succeeded")
	}
	if _, err := records.New(s).SendMessage(as("ai:carol"), &aimemoryv1.SendMessageRequest{To: "ai:bob", Title: "private", Payload: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).SendMessage(as("ai:carol"), &aimemoryv1.SendMessageRequest{To: "ai:alice", Title: "for alice", Payload: "p"}); err != nil {
		t.Fatal(err)
	}
	queue, _, err := s.DueDeliveries(ctx, 1<<62, 10, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range queue {
		got = append(got, d.SubscriptionID+":"+d.Event.GetTitle())
	}
	if len(got) != 2 || got[0] != "all:global one" || got[1] != "all:for alice" {
		t.Fatalf("queued %v, want all:global one and all:for alice", got)
	}
}
