package e2e

import (
	"strings"
	"testing"
)

// inbox is what an identity sees of an inbox namespace through memory_list.
func inbox(h *host, who string) []map[string]any {
	h.t.Helper()
	out := h.ok("memory_list", map[string]any{"namespace": "_messages/" + who, "format": "json"})
	var ms []map[string]any
	if list, ok := out["memories"].([]any); ok {
		for _, m := range list {
			ms = append(ms, m.(map[string]any))
		}
	}
	return ms
}

func TestNotifyOverStdio(t *testing.T) {
	e := newEnv(t)
	alice := adminHost(e, "alice")
	bob := adminHost(e, "bob")

	out := alice.ok("memory_notify", map[string]any{"target_agent_id": "bob", "title": "review ready", "payload": "PR 12 needs eyes",
		"priority": 7, "tier": "short"})
	if out["from"] != "alice" || out["to"] != "bob" || out["namespace"] != "_messages/bob" || out["tier"] != "short" ||
		out["id"] == "" || out["delivered_at"] == "" || out["title"] != nil {
		t.Fatalf("notify = %v", out)
	}
	// The same title again is a message of its own, never an overwrite.
	again := alice.ok("memory_notify", map[string]any{"target_agent_id": "bob", "title": "review ready", "payload": "ping"})
	if again["id"] == out["id"] || again["title"] != "review ready (2)" || again["tier"] != "mid" {
		t.Fatalf("repeat = %v", again)
	}

	// session_start counts the recipient's unread messages, and only theirs.
	unread := func(h *host) any {
		text, isErr := h.call("memory_capabilities", map[string]any{"tool": "memory_session_start", "arguments": map[string]any{"format": "json"}})
		if isErr {
			t.Fatalf("session_start: %s", text)
		}
		return jsonOf(t, text)["unread"]
	}
	if n, m := unread(bob), unread(alice); n != 2.0 || m != 0.0 {
		t.Fatalf("unread: bob %v, alice %v; want 2 and 0", n, m)
	}

	got := inbox(bob, "bob")
	if len(got) != 2 {
		t.Fatalf("bob's inbox = %v", got)
	}
	for _, m := range got {
		if m["created_by"] != "alice" {
			t.Fatalf("message not from alice: %v", m)
		}
	}
	// Only the recipient reads it.
	if seen := inbox(alice, "bob"); len(seen) != 0 {
		t.Fatalf("alice reads bob's inbox: %v", seen)
	}
	if text, _ := alice.call("memory_get", map[string]any{"id": out["id"], "format": "json"}); strings.Contains(text, "PR 12") {
		t.Fatalf("alice gets bob's message: %s", text)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"title": "t", "payload": "p"}, "target_agent_id is required"},
		{map[string]any{"target_agent_id": "../alice", "title": "t", "payload": "p"}, "target_agent_id: must not contain '/' or '..'"},
		{map[string]any{"target_agent_id": "bob/../../alice", "title": "t", "payload": "p"}, "target_agent_id: must not contain '/' or '..'"},
		{map[string]any{"target_agent_id": "bob/x", "title": "t", "payload": "p"}, "target_agent_id: must not contain '/' or '..'"},
		{map[string]any{"target_agent_id": "bob smith", "title": "t", "payload": "p"}, "target_agent_id: may contain only"},
		{map[string]any{"target_agent_id": strings.Repeat("b", 129), "title": "t", "payload": "p"}, "target_agent_id: must be 1 to 128 bytes"},
		{map[string]any{"target_agent_id": 5, "title": "t", "payload": "p"}, "target_agent_id: must be a string"},
		{map[string]any{"target_agent_id": "bob", "payload": "p"}, "title is required"},
		{map[string]any{"target_agent_id": "bob", "title": strings.Repeat("t", 513), "payload": "p"}, "title:"},
		{map[string]any{"target_agent_id": "bob", "title": "t"}, "payload is required"},
		{map[string]any{"target_agent_id": "bob", "title": "t", "payload": "a\rb"}, "payload:"},
		{map[string]any{"target_agent_id": "bob", "title": "t", "payload": "p", "priority": 11}, "priority"},
		{map[string]any{"target_agent_id": "bob", "title": "t", "payload": "p", "priority": "high"}, "priority: must be an integer"},
		{map[string]any{"target_agent_id": "bob", "title": "t", "payload": "p", "tier": "forever"}, "tier"},
		// The sender is the session's identity; no argument can claim another.
		{map[string]any{"target_agent_id": "bob", "title": "t", "payload": "p", "agent_id": "carol"}, "agent_id"},
	} {
		alice.fails("memory_notify", tc.args, tc.want)
	}
	if got := inbox(bob, "bob"); len(got) != 2 {
		t.Fatalf("refused notifies changed bob's inbox: %v", got)
	}
	if got := inbox(alice, "alice"); len(got) != 0 {
		t.Fatalf("refused notifies reached alice's inbox: %v", got)
	}
	// An ordinary store into an inbox stays refused.
	alice.fails("memory_store", map[string]any{"title": "fake", "content": "x", "namespace": "_messages/bob"}, "guarded")
}
