package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/sdk"
)

// envelope is the part of a JSON-RPC message the host routes on, decoded
// as JSON (so "tools\/call" is tools/call, as it is for mcp-go). The
// arguments stay raw bytes: the direct path (direct.go) hands them to the
// plugin as they came.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // kept raw, for the direct path
		Meta      json.RawMessage `json:"_meta"`
		Task      json.RawMessage `json:"task"`
		RequestID json.RawMessage `json:"requestId"` // of notifications/cancelled
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// decodeEnvelope reads a message's envelope. A field of the wrong type
// (a number for the tool name, say) is left empty rather than failing the
// whole message, so the answer can still carry the request's id.
func decodeEnvelope(line []byte) (envelope, error) {
	var env envelope
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return env, errNotObject
	}
	err := json.Unmarshal(line, &env)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		err = nil
	}
	return env, err
}

var errNotObject = errors.New("not a JSON object")

// maxJSONDepth is encoding/json's nesting limit (every decoder here, mcp-go's
// too, is encoding/json): a message nested deeper is valid JSON none of
// them reads.
const maxJSONDepth = 10000

// tooDeepAnswer answers a message nested deeper than maxJSONDepth with an
// Invalid Request error carrying the message's own id, read from its
// top-level object, so the client is not left waiting for its timeout (a
// parse error has no id to answer).
func tooDeepAnswer(line []byte) (mcp.JSONRPCMessage, bool) {
	if !nestsDeeperThan(line, maxJSONDepth) {
		return nil, false
	}
	return errorResponse(leadingID(line), mcp.INVALID_REQUEST,
		fmt.Sprintf("Invalid Request: the message nests deeper than %d levels, the most the JSON parser reads", maxJSONDepth), nil), true
}

// nestsDeeperThan reports whether data opens more than limit objects or
// arrays inside one another (strings skipped).
func nestsDeeperThan(data []byte, limit int) bool {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
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
	env, err := decodeEnvelope(raw)
	if err != nil {
		if msg, deep := tooDeepAnswer(raw); deep {
			return msg
		}
		return bounded(h.srv.HandleMessage(ctx, raw)) // mcp-go answers what it cannot parse
	}
	return h.handle(ctx, &env, raw)
}

// AnswerCall answers a tools/call message the host answers itself: a
// known tool whose family is not loaded (the isError result naming the
// family), an unknown tool, a registered family tool (the direct path), or
// a message nested too deep to decode (tooDeepAnswer). ok is false for
// everything else, which belongs to mcp-go. The HTTP front
// calls it before handing a message to mcp-go's transport, which would
// only say "not found".
func (h *Host) AnswerCall(ctx context.Context, raw []byte) (msg mcp.JSONRPCMessage, ok bool) {
	env, err := decodeEnvelope(raw)
	if err != nil {
		return tooDeepAnswer(raw) // mcp-go would answer it without its id
	}
	if env.Method != string(mcp.MethodToolsCall) || !env.isRequest() || env.Params.Name == "" {
		return nil, false
	}
	name := env.Params.Name
	if name == capabilitiesName {
		return nil, false
	}
	if text, unloaded := h.unloadedToolMessage(ctx, name); unloaded {
		return mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(env.ID), Result: mcp.NewToolResultError(text)}, true
	}
	if env.Params.Meta != nil {
		return nil, false // a 2026-07-28 request: mcp-go decorates its answer
	}
	if h.set.FamilyOf(name) == "" {
		return errorResponse(env.ID, mcp.INVALID_PARAMS, fmt.Sprintf("unknown tool %s; %s lists the families and their tools", sdk.Quote(name), capabilitiesName), nil), true
	}
	return h.direct(ctx, &env)
}

// IsToolsList reports whether a message is a tools/list request (the HTTP
// front reports their answers to the host, see ListAnswered).
func IsToolsList(raw []byte) bool {
	env, err := decodeEnvelope(raw)
	return err == nil && env.Method == string(mcp.MethodToolsList) && env.isRequest()
}

func (h *Host) handle(ctx context.Context, env *envelope, raw json.RawMessage) mcp.JSONRPCMessage {
	if env.Method == string(mcp.MethodToolsCall) && env.isRequest() && env.Params.Name != "" {
		name := env.Params.Name
		if text, ok := h.unloadedToolMessage(ctx, name); ok {
			return mcp.JSONRPCResponse{
				JSONRPC: mcp.JSONRPC_VERSION,
				ID:      mcp.NewRequestId(env.ID),
				Result:  mcp.NewToolResultError(text),
			}
		}
		if name != capabilitiesName && h.set.FamilyOf(name) == "" {
			// mcp-go would echo the whole name back.
			return errorResponse(env.ID, mcp.INVALID_PARAMS, fmt.Sprintf("unknown tool %s; %s lists the families and their tools", sdk.Quote(name), capabilitiesName), nil)
		}
		if resp, ok := h.direct(ctx, env); ok {
			return resp
		}
	}
	if env.Method == string(mcp.MethodNotificationCancelled) && !env.isRequest() {
		h.cancelDirect(env) // mcp-go cancels the calls it runs itself
	}
	return bounded(h.srv.HandleMessage(ctx, raw))
}

// maxErrorMessage bounds the message of an error mcp-go answers, which may
// quote the request (an unknown method, for one).
const maxErrorMessage = 256

func bounded(msg mcp.JSONRPCMessage) mcp.JSONRPCMessage {
	if e, ok := msg.(mcp.JSONRPCError); ok && len(e.Error.Message) > maxErrorMessage {
		m := e.Error.Message
		cut := maxErrorMessage - 64
		for cut > 0 && !utf8.RuneStart(m[cut]) {
			cut--
		}
		e.Error.Message = fmt.Sprintf("%s… (%d bytes)", m[:cut], len(m))
		return e
	}
	return msg
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
