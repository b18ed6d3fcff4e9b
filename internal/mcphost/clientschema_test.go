package mcphost

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestUntypedSchema: only a top-level property's scalar type,
// "items":{"type":"string"} and an empty "properties" go; every other key,
// type and the order of keys stay as written.
func TestUntypedSchema(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"object","properties":{"id":{"type":"string","description":"Id"},"n":{"type":"integer","description":"N"},"tags":{"type":"array","items":{"type":"string"},"description":"T"},"mode":{"description":"a or b","type":"string","enum":["a","b"]}},"required":["id"]}`,
			`{"type":"object","properties":{"id":{"description":"Id"},"n":{"description":"N"},"tags":{"type":"array","description":"T"},"mode":{"description":"a or b","enum":["a","b"]}},"required":["id"]}`},
		{`{"type":"object","properties":{"ns":{"type":"array","items":{"type":"integer"}}}}`, `{"type":"object","properties":{"ns":{"type":"array","items":{"type":"integer"}}}}`},
		{`{"type":"object","properties":{}}`, `{"type":"object"}`},
		{`{"properties":{},"type":"object","required":[]}`, `{"type":"object","required":[]}`},
		{`{"type":"object"}`, `{"type":"object"}`},
		{`{"type":"object","properties":{"x":{"type":["string","null"]}}}`, `{"type":"object","properties":{"x":{"type":["string","null"]}}}`},
		{`{"type":"object","properties":{"x":{"type":"number"},"b":{"type":"boolean"},"o":{"type":"object"},"a":{"type":"array"}}}`,
			`{"type":"object","properties":{"x":{},"b":{},"o":{"type":"object"},"a":{"type":"array"}}}`},
		{`{"type":"object","properties":{"x":true}}`, `{"type":"object","properties":{"x":true}}`}, // not an object: left as is
		{`not json`, `not json`},
	} {
		if got := string(untypedSchema(json.RawMessage(c.in))); got != c.want {
			t.Errorf("untypedSchema(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestTypedArguments: a string the schema types as integer, number or
// boolean is converted only when it is exactly one; every other value, and
// every property the schema does not type so, reaches the tool as sent.
func TestTypedArguments(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer"},"threshold":{"type":"number"},"all":{"type":"boolean"},"title":{"type":"string"},"tags":{"type":"array"},"either":{"type":["integer","null"]}}}`)
	for _, c := range []struct{ in, want string }{
		{`{"limit":"5","threshold":"0.6","all":"true"}`, `{"limit":5,"threshold":0.6,"all":true}`},
		{`{"all":"false","threshold":"-1e-3","limit":"-12"}`, `{"all":false,"threshold":-1e-3,"limit":-12}`},
		{`{"limit":"five"}`, `{"limit":"five"}`},
		{`{"limit":"5.0"}`, `{"limit":"5.0"}`}, // not an integer: the tool says so
		{`{"limit":"1e2"}`, `{"limit":"1e2"}`}, // nor this
		{`{"limit":" 5"}`, `{"limit":" 5"}`},   // not exactly a number
		{`{"limit":"05"}`, `{"limit":"05"}`},   // not a JSON number
		{`{"limit":"+5"}`, `{"limit":"+5"}`},   // nor this
		{`{"limit":"5 "}`, `{"limit":"5 "}`},   // nor this
		{`{"limit":""}`, `{"limit":""}`},       // nor this
		{`{"threshold":"0.6."}`, `{"threshold":"0.6."}`},
		{`{"threshold":"NaN"}`, `{"threshold":"NaN"}`},
		{`{"all":"True"}`, `{"all":"True"}`},                           // not exactly a boolean
		{`{"all":"1"}`, `{"all":"1"}`},                                 // nor this
		{`{"title":"5","tags":"true"}`, `{"title":"5","tags":"true"}`}, // typed otherwise
		{`{"either":"5"}`, `{"either":"5"}`},                           // not one type: left to the tool
		{`{"unknown":"5"}`, `{"unknown":"5"}`},                         // not in the schema
		{`{"limit":5,"all":true}`, `{"limit":5,"all":true}`},
		{"{\n  \"limit\" :\t\"5\",\n  \"all\": \"true\"\n}", `{"limit":5,"all":true}`}, // spaced out
		{`{"title":"\"limit\":\"5\""}`, `{"title":"\"limit\":\"5\""}`},                 // only inside a string
		{`{"\u006cimit":"5"}`, `{"limit":5}`},                                          // an escaped name is the same name
		{`{}`, `{}`},
		{`[1]`, `[1]`},
	} {
		if got := string(typedArguments(scalarProperties(schema), json.RawMessage(c.in))); got != c.want {
			t.Errorf("typedArguments(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	// A schema it cannot read converts nothing.
	for _, bad := range []string{``, `not json`, `{"properties":[]}`} {
		if got := string(typedArguments(scalarProperties(json.RawMessage(bad)), json.RawMessage(`{"limit":"5"}`))); got != `{"limit":"5"}` {
			t.Errorf("schema %q: got %s", bad, got)
		}
	}
}

// TestUntypedClientsArgumentsAreTyped: Claude Code, which is listed no
// types, has "5" taken as 5 on its way to a tool (called directly or
// through the bridge) and in memory_capabilities' own arguments; any other
// client's arguments reach the tool as sent.
func TestUntypedClientsArgumentsAreTyped(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	call := func(client, name, args string) string {
		msg := h.HandleMessage(WithClientName(context.Background(), client), json.RawMessage(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`))
		b, _ := json.Marshal(msg)
		return string(b)
	}
	for _, c := range []struct{ client, name, args, want string }{
		{"claude-code", "memory_store", `{"limit":"5","title":"7"}`, `{\"limit\":5,\"title\":\"7\"}`},
		{"claude-code", "memory_store", `{"limit":"five"}`, `{\"limit\":\"five\"}`},
		{"claude-code", "memory_capabilities", `{"tool":"test_echo","arguments":{"limit":"5"}}`, `{\"limit\":5}`},
		{"claude-code", "memory_capabilities", `{"family":"echo2","include_schema":"true"}`, `test_echo2`},
		{"codex-mcp-client", "memory_store", `{"limit":"5"}`, `{\"limit\":\"5\"}`},
		{"codex-mcp-client", "memory_capabilities", `{"tool":"test_echo","arguments":{"limit":"5"}}`, `{\"limit\":\"5\"}`},
		{"codex-mcp-client", "memory_capabilities", `{"family":"echo2","include_schema":"true"}`, `include_schema: must be a boolean`},
	} {
		if got := call(c.client, c.name, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s calls %s %s: %s, want it to contain %s", c.client, c.name, c.args, got, c.want)
		}
	}
}

// BenchmarkTypedArguments: what an untyped client's call pays, for a
// store-like call with nothing to convert and one with a limit "5".
func BenchmarkTypedArguments(b *testing.B) {
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"content":{"type":"string"},"tier":{"type":"string"},"namespace":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"priority":{"type":"integer"},"confidence":{"type":"number"},"metadata":{"type":"object"}},"required":["title","content"]}`)
	types := scalarProperties(schema)
	for name, args := range map[string]string{
		"no number": `{"title":"Staging database","content":"The staging database is pg-staging-7 on port 6432.","tags":["infra"]}`,
		"a number":  `{"title":"Staging database","content":"The staging database is pg-staging-7 on port 6432.","tags":["infra"],"priority":5}`,
		"a string":  `{"title":"Staging database","content":"The staging database is pg-staging-7 on port 6432.","tags":["infra"],"priority":"5"}`,
	} {
		raw := json.RawMessage(args)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				typedArguments(types, raw)
			}
		})
	}
}
