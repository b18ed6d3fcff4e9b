package mcphost

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/sdk"
)

// untypedStringClients are the clients (clientInfo.name) that pass a tool's
// input schema to the model as given and check no argument's type against
// it: Claude Code. For them a string property's "type":"string" (about 4
// tokens in every request) and an array's "items":{"type":"string"} (7)
// tell the model nothing its description does not, so tools/list leaves
// them out; a number's or a boolean's type stays (the tools refuse "5" and
// "true"). Every other client gets the schema in full: Gemini CLI and Codex
// validate arguments against it.
var untypedStringClients = map[string]bool{"claude-code": true}

// shapeList fits a tools/list answer to the client it goes to.
func (h *Host) shapeList(ctx context.Context, res *mcp.ListToolsResult) {
	if res == nil || !untypedStringClients[h.clientNameOf(ctx)] {
		return
	}
	for i := range res.Tools {
		if s := res.Tools[i].RawInputSchema; s != nil {
			res.Tools[i].RawInputSchema = withoutStringTypes(s)
		}
	}
}

// withoutStringTypes returns schema with "type":"string" and
// "items":{"type":"string"} removed from each of its top-level properties,
// every other key in its place; a schema it cannot read is returned as is.
func withoutStringTypes(schema json.RawMessage) json.RawMessage {
	keys, vals, ok := members(schema)
	if !ok {
		return schema
	}
	for i, k := range keys {
		if k != "properties" {
			continue
		}
		names, props, ok := members(vals[i])
		if !ok {
			return schema
		}
		for j, p := range props {
			pk, pv, ok := members(p)
			if !ok {
				return schema
			}
			var keep []string
			var kept []json.RawMessage
			for n := range pk {
				if pk[n] == "type" && string(pv[n]) == `"string"` || pk[n] == "items" && string(pv[n]) == `{"type":"string"}` {
					continue
				}
				keep, kept = append(keep, pk[n]), append(kept, pv[n])
			}
			props[j] = object(keep, kept)
		}
		vals[i] = object(names, props)
	}
	return object(keys, vals)
}

// members splits a JSON object into its keys and raw values, in order.
func members(raw json.RawMessage) (keys []string, vals []json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, t.(string)), append(vals, v)
	}
	return keys, vals, true
}

// object writes keys and vals back as one compact JSON object.
func object(keys []string, vals []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := sdk.MarshalCompact(k) // a string always encodes
		b.Write(key)
		b.WriteByte(':')
		b.Write(vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}
