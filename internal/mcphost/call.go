package mcphost

import (
	"context"
	"encoding/json"
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
