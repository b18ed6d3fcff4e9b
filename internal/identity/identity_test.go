package identity

import (
	"testing"

	"github.com/ai-memory/ai-memory/sdk/record"
)

func TestResolve(t *testing.T) {
	cases := []struct{ configured, client, want string }{
		{"alice", "claude-code", "alice"},
		{"", "claude-code", "ai:claude-code"},
		{"", "Claude Code (desktop)", "ai:Claude-Code-desktop"},
		{"", "", "anonymous"},
		{"", "   ", "anonymous"},
		{"", "日本", "anonymous"},
	}
	for _, c := range cases {
		got := Resolve(c.configured, c.client)
		if got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", c.configured, c.client, got, c.want)
		}
		if err := record.ValidateAgentID("agent_id", got); err != nil {
			t.Errorf("Resolve(%q, %q) = %q is not a valid agent id: %v", c.configured, c.client, got, err)
		}
	}
}
