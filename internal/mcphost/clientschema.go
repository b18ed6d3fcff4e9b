package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/sdk"
)

// untypedClients are the clients (clientInfo.name) that pass a tool's input
// schema to the model as given and check no argument's type against it:
// Claude Code. For them a property's scalar type ("type":"string",
// "integer", "number" or "boolean", 3 to 5 tokens in every request) and an
// array's "items":{"type":"string"} (7) tell the model little its
// description does not, so tools/list leaves them out, and the host takes
// the numbers and booleans such a model may then send as strings
// (typedArguments). Every other client gets the schema in full and its
// arguments as sent: Gemini CLI and Codex validate arguments against it.
var untypedClients = map[string]bool{"claude-code": true}

// untyped reports whether the client of ctx is sent schemas without types.
func (h *Host) untyped(ctx context.Context) bool { return untypedClients[h.clientNameOf(ctx)] }

// shapeList fits a tools/list answer to the client it goes to.
func (h *Host) shapeList(ctx context.Context, res *mcp.ListToolsResult) {
	if res == nil || !h.untyped(ctx) {
		return
	}
	for i := range res.Tools {
		if s := res.Tools[i].RawInputSchema; s != nil {
			res.Tools[i].RawInputSchema = untypedSchema(s)
		}
	}
}

// scalarTypes are the property types an untyped client is not sent.
var scalarTypes = map[string]bool{`"string"`: true, `"integer"`: true, `"number"`: true, `"boolean"`: true}

// untypedSchema returns schema with each top-level property's scalar
// "type" and "items":{"type":"string"} removed, and an empty "properties"
// (Claude Code calls a tool without it all the same: TestRealHarnesses),
// every other key in its place; a schema it cannot read is returned as is.
func untypedSchema(schema json.RawMessage) json.RawMessage {
	keys, vals, ok := members(schema)
	if !ok {
		return schema
	}
	for i := 0; i < len(keys); i++ {
		if keys[i] != "properties" {
			continue
		}
		names, props, ok := members(vals[i])
		if !ok {
			return schema
		}
		if len(names) == 0 {
			keys, vals = slices.Delete(keys, i, i+1), slices.Delete(vals, i, i+1)
			i--
			continue
		}
		for j, p := range props {
			pk, pv, ok := members(p)
			if !ok {
				return schema
			}
			var keep []string
			var kept []json.RawMessage
			for n := range pk {
				if pk[n] == "type" && scalarTypes[string(pv[n])] || pk[n] == "items" && string(pv[n]) == `{"type":"string"}` {
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

// typedArguments returns args with each string that types (a tool's
// scalarProperties) says is an integer, number or boolean, and that is
// exactly one ("5", "0.6", "true"), written as that value: what a model
// sends for a property whose type it was not shown. Anything else stays as
// sent, for the tool to accept or refuse naming the field; args are
// returned unchanged if nothing was converted or they cannot be read.
func typedArguments(types map[string]string, args json.RawMessage) json.RawMessage {
	if len(types) == 0 {
		return args
	}
	names, vals, ok := members(args)
	if !ok {
		return args
	}
	converted := false
	for i, v := range vals {
		typ, ok := types[names[i]]
		if !ok || len(v) == 0 || v[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		if typed, ok := scalarOf(typ, s); ok {
			vals[i], converted = typed, true
		}
	}
	if !converted {
		return args
	}
	return object(names, vals)
}

// scalarProperties maps each top-level property of schema typed integer,
// number or boolean to that type (nil for a schema it cannot read).
func scalarProperties(schema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var types map[string]string
	for name, p := range s.Properties {
		if t, _ := p.Type.(string); t == "integer" || t == "number" || t == "boolean" {
			if types == nil {
				types = map[string]string{}
			}
			types[name] = t
		}
	}
	return types
}

// scalarPropertiesOf is scalarProperties of tool's input schema, read once
// per tool (a plugin's definitions do not change while it is installed).
func (h *Host) scalarPropertiesOf(family, tool string) map[string]string {
	if v, ok := h.scalars.Load(tool); ok {
		return v.(map[string]string)
	}
	types := scalarProperties(h.inputSchema(family, tool))
	h.scalars.Store(tool, types)
	return types
}

// scalarOf is s as a JSON value of type typ, if s is exactly one: a JSON
// number (integer: without fraction or exponent) or true or false.
func scalarOf(typ, s string) (json.RawMessage, bool) {
	switch typ {
	case "boolean":
		return json.RawMessage(s), s == "true" || s == "false"
	case "integer":
		return json.RawMessage(s), isJSONNumber(s) && !strings.ContainsAny(s, ".eE")
	case "number":
		return json.RawMessage(s), isJSONNumber(s)
	}
	return nil, false
}

// isJSONNumber reports whether s is a JSON number literal and nothing else
// (no sign but a leading minus, no space, no leading zero).
func isJSONNumber(s string) bool {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') || s[len(s)-1] < '0' || s[len(s)-1] > '9' {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
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
