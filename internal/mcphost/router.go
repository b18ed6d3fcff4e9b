package mcphost

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// envelope is the part of a JSON-RPC message the host routes on, decoded
// as JSON (so "tools\/call" is tools/call, as it is for mcp-go). The
// arguments are left out: only memory_capabilities' are ever looked at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// isRequest reports whether the message expects a response.
func (e *envelope) isRequest() bool { return len(e.ID) > 0 && string(e.ID) != "null" }

// HandleMessage is the host's router, the entry point of every transport
// for one JSON-RPC message of a session (ctx carries the mcp-go session).
// A call of a known tool whose family this session has not loaded is
// answered here with an isError result that says how to load it (mcp-go
// would only say "not found", a protocol error many clients hide from the
// model); everything else goes to mcp-go untouched.
func (h *Host) HandleMessage(ctx context.Context, raw json.RawMessage) mcp.JSONRPCMessage {
	var env envelope
	if json.Unmarshal(raw, &env) != nil {
		return h.srv.HandleMessage(ctx, raw) // mcp-go answers what it cannot parse
	}
	return h.handle(ctx, &env, raw)
}

func (h *Host) handle(ctx context.Context, env *envelope, raw json.RawMessage) mcp.JSONRPCMessage {
	if env.Method == string(mcp.MethodToolsCall) && env.isRequest() {
		if text, ok := h.unloadedToolMessage(ctx, env.Params.Name); ok {
			return mcp.JSONRPCResponse{
				JSONRPC: mcp.JSONRPC_VERSION,
				ID:      mcp.NewRequestId(env.ID),
				Result:  mcp.NewToolResultError(text),
			}
		}
	}
	return h.srv.HandleMessage(ctx, raw)
}

// ordersAfter reports whether later messages on the same ordered stream
// (a stdio pipe) must wait for this one to finish: initialize (it decides
// the identity and with it the families) and every message that may grant a
// family. Calls otherwise run concurrently.
func (h *Host) ordersAfter(env *envelope, raw []byte) bool {
	switch {
	case env.Method == string(mcp.MethodInitialize):
		return true
	case env.Method != string(mcp.MethodToolsCall) || env.Params.Name != capabilitiesName:
		return false
	}
	var msg struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &msg) != nil || len(msg.Params.Arguments) == 0 {
		return false
	}
	a, err := decodeCapabilitiesArgs(msg.Params.Arguments, h.set)
	return err == nil && h.expands(a)
}
