package mcphost

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Call runs one tool by name for this host's identity and grant, for a
// client of the host that is not an MCP session (the web console): the
// memory_capabilities bridge's path, so the allowlist, the grant of a
// family not loaded yet (its rate limit and audit) and the call itself are
// exactly an agent's. It returns the tool's text and whether it is an error.
func (h *Host) Call(ctx context.Context, tool string, args json.RawMessage) ([]byte, bool) {
	res := h.bridge(ctx, tool, args)
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	return []byte(text.String()), res.IsError
}

// Callable reports whether Call may run tool for this identity now: its
// family is loaded or granted in this session and declares it. The web
// console hides what is not callable.
func (h *Host) Callable(tool string) bool {
	f := h.set.FamilyOf(tool)
	return f != "" && h.isGranted(f) && slices.Contains(h.set.ToolsOf(f), tool)
}
