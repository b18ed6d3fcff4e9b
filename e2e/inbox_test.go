package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// memory_inbox over stdio: the recipient reads its own messages (unread
// filter before the limit, mark_read), and another identity cannot read
// them, neither by an agent_id argument nor through the bridge.
func TestPowerInboxOverStdio(t *testing.T) {
	e := newEnv(t)
	alice := adminHost(e, "alice")
	for i := range 3 {
		alice.ok("memory_notify", map[string]any{"target_agent_id": "bob", "title": fmt.Sprint("review ", i), "payload": fmt.Sprint("PR ", i, " needs eyes")})
	}
	alice.ok("memory_notify", map[string]any{"target_agent_id": "carol", "title": "for carol", "payload": "carol only"})
	bob := e.startHost([]string{"--profile", "power"}, "AI_MEMORY_AGENT_ID=bob")
	carol := e.startHost([]string{"--profile", "core"}, "AI_MEMORY_AGENT_ID=carol")

	got := bob.ok("memory_inbox", map[string]any{})
	msgs := rows(got["messages"])
	if got["count"] != 3.0 || got["unread"] != 3.0 || len(msgs) != 3 || msgs[0]["from"] != "alice" || msgs[0]["title"] != "review 2" ||
		msgs[0]["payload"] != "PR 2 needs eyes" || msgs[0]["read"] != nil || msgs[0]["created_at"] == nil {
		t.Fatalf("bob's inbox = %v", got)
	}
	// mark_read marks what it returned; unread_only filters, then limits.
	first := rows(bob.ok("memory_inbox", map[string]any{"limit": 1, "mark_read": true})["messages"])
	if len(first) != 1 || first[0]["title"] != "review 2" {
		t.Fatalf("limit 1 = %v", first)
	}
	unread := bob.ok("memory_inbox", map[string]any{"unread_only": true, "limit": 2})
	if titles := titlesOf(rows(unread["messages"])); titles != "review 1,review 0" || unread["unread"] != 2.0 {
		t.Fatalf("unread_only limit 2 = %v", unread)
	}
	if all := rows(bob.ok("memory_inbox", map[string]any{})["messages"]); all[0]["read"] != true || all[1]["read"] != nil {
		t.Fatalf("after mark_read = %v", all)
	}

	// Another identity: by argument refused, by the bridge its own inbox only.
	bob.fails("memory_inbox", map[string]any{"agent_id": "carol"}, "agent_id: an inbox is read as the session identity")
	text, isErr := carol.call("memory_capabilities", map[string]any{"tool": "memory_inbox", "arguments": map[string]any{"agent_id": "bob"}})
	if !isErr || !strings.Contains(text, "agent_id: an inbox is read as the session identity") || strings.Contains(text, "needs eyes") {
		t.Fatalf("carol asking for bob's inbox through the bridge: %s", text)
	}
	text, isErr = carol.call("memory_capabilities", map[string]any{"tool": "memory_inbox", "arguments": map[string]any{}})
	own := jsonOf(t, text)
	if isErr || own["count"] != 1.0 || rows(own["messages"])[0]["payload"] != "carol only" || strings.Contains(text, "needs eyes") {
		t.Fatalf("carol's own inbox through the bridge: %s", text)
	}
	for _, bad := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"limit": 201}, "limit"},
		{map[string]any{"unread_only": "yes"}, "unread_only"},
		{map[string]any{"mark_read": 1}, "mark_read"},
	} {
		bob.fails("memory_inbox", bad.args, bad.want)
	}
	if got := bob.ok("memory_inbox", map[string]any{"unread_only": true}); got["count"] != 2.0 {
		t.Fatalf("a refused call changed the inbox: %v", got)
	}
}

func titlesOf(ms []map[string]any) string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprint(m["title"]))
	}
	return strings.Join(out, ",")
}
