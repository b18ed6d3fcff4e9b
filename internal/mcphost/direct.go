package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/sdk"
)

// A call of a registered family tool is the host's hot path, and it is
// answered here rather than by mcp-go. Profiled under a steady load, mcp-go
// decoded each such message four more times after the router's envelope
// (base message, protocol info, _meta, the typed request), the arguments a
// sixth time to check they were an object, and re-encoded the plugin's text
// by reflection through a map and a compacting pass: about a third of the
// host's CPU per call. Here the message is decoded once (the envelope, which
// keeps the arguments raw) and the answer is written once, the plugin's
// bytes escaped straight into the JSON-RPC line.
//
// Everything else still goes to mcp-go, as do calls this path does not
// reproduce exactly: a 2026-07-28 request (its _meta carries protocol and
// client identity, and its answer is decorated), a task-augmented call, an
// envelope that is not JSON-RPC 2.0, an id that is not a string or number.

// direct answers a tools/call of a registered family tool, or reports
// false when the message needs mcp-go.
func (h *Host) direct(ctx context.Context, env *envelope) (mcp.JSONRPCMessage, bool) {
	p := &env.Params
	if env.JSONRPC != mcp.JSONRPC_VERSION || p.Meta != nil || p.Task != nil || !plainID(env.ID) {
		return nil, false
	}
	family, ok := h.registered(p.Name)
	if !ok {
		return nil, false
	}
	// notifications/cancelled names the request by its id.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key, handle := string(env.ID), &cancel
	h.inflight.Store(key, handle)
	defer h.inflight.CompareAndDelete(key, handle)

	var a answer
	if args, err := objectArguments(p.Arguments); err != nil {
		a = failed(err)
	} else {
		a = h.run(ctx, family, p.Name, args)
	}
	return toolAnswerLine(env.ID, a), true
}

// errCancelled answers a call cancelled before the host sent it to its
// plugin; once sent, the plugin's answer says what happened (sdk/cancel.go).
var errCancelled = errors.New(sdk.CancelledMessage)

// cancelDirect cancels the direct call a notifications/cancelled names.
func (h *Host) cancelDirect(env *envelope) {
	if v, ok := h.inflight.Load(string(env.Params.RequestID)); ok {
		(*v.(*context.CancelFunc))()
	}
}

// registered reports the family whose registered tool name is.
func (h *Host) registered(name string) (string, bool) {
	h.reg.Lock()
	defer h.reg.Unlock()
	f, ok := h.tools[name]
	return f, ok
}

// plainID reports whether a request id (from a message that decoded) is a
// string or a number, which the answer can echo byte for byte.
func plainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

var errNotObjectArgs = errors.New("arguments: must be a JSON object")

// objectArguments returns a call's arguments (part of a message that
// decoded, so valid JSON) if they are an object; absent or null is {}.
func objectArguments(raw json.RawMessage) ([]byte, error) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return []byte("{}"), nil
	case raw[0] != '{':
		return nil, errNotObjectArgs
	}
	return raw, nil
}

// rawLine is a JSON-RPC message already encoded; the stdio writer sends it
// as it is, and any other encoder copies it (json.RawMessage).
type rawLine = json.RawMessage

// toolAnswerLine is the JSON-RPC answer to request id carrying a tool
// result: the same object mcp-go sends, encoded in one pass.
func toolAnswerLine(id json.RawMessage, a answer) rawLine {
	// Room for the escapes too: a plugin's JSON text has a backslash to add
	// before every quote, and growing the line copied it once more.
	escapes := bytes.Count(a.text, []byte{'"'}) + bytes.Count(a.text, []byte{'\\'}) + bytes.Count(a.text, []byte{'\n'})
	b := make([]byte, 0, len(a.text)+escapes+len(id)+96)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":{"content":[{"type":"text","text":`...)
	b = appendJSONString(b, a.text)
	b = append(b, "}]"...)
	if a.isError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, "}}"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, as encoding/json writes it
// but without HTML escaping (<, > and & cost tokens and mean nothing to an
// MCP client): invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are
// escaped, so the line is safe to embed anywhere JSON goes.
func appendJSONString(b, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
