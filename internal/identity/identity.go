// Package identity resolves who a session is: --agent-id / AI_MEMORY_AGENT_ID,
// else ai:<clientInfo.name> from initialize, else anonymous. The id is stable
// across restarts (no host or pid in it). It is claimed, not authenticated.
package identity

import (
	"strings"
)

// Anonymous is the identity of a session that said nothing about itself.
const Anonymous = "anonymous"

// Resolve picks the session identity. configured is the --agent-id flag or
// AI_MEMORY_AGENT_ID (already validated); clientName is clientInfo.name.
func Resolve(configured, clientName string) string {
	if configured != "" {
		return configured
	}
	if name := sanitize(clientName); name != "" {
		return "ai:" + name
	}
	return Anonymous
}

// sanitize keeps [A-Za-z0-9_.-] and folds every other run into one '-', so
// the result is a valid agent id ("Claude Code" → "Claude-Code").
func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-")
	if len(out) > 120 {
		out = out[:120]
	}
	return out
}
