package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
)

// WireTools returns the `tools` array of tools/list exactly as this host
// sends it (mcp-go's own encoding), one raw JSON object per tool.
func (h *Host) WireTools(ctx context.Context) ([]json.RawMessage, error) {
	resp := h.srv.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	raw, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		return nil, err
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("tools/list: %s", msg.Error.Message)
	}
	return msg.Result.Tools, nil
}
