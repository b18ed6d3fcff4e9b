package mcphost

import (
	"encoding/json"
	"testing"
)

// TestWithoutStringTypes: only a top-level property's "type":"string" and
// "items":{"type":"string"} go; every other key, type and the order of keys
// stay as written.
func TestWithoutStringTypes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"object","properties":{"id":{"type":"string","description":"Id"},"n":{"type":"integer","description":"N"},"tags":{"type":"array","items":{"type":"string"},"description":"T"},"mode":{"description":"a or b","type":"string","enum":["a","b"]}},"required":["id"]}`,
			`{"type":"object","properties":{"id":{"description":"Id"},"n":{"type":"integer","description":"N"},"tags":{"type":"array","description":"T"},"mode":{"description":"a or b","enum":["a","b"]}},"required":["id"]}`},
		{`{"type":"object","properties":{"ns":{"type":"array","items":{"type":"integer"}}}}`, `{"type":"object","properties":{"ns":{"type":"array","items":{"type":"integer"}}}}`},
		{`{"type":"object","properties":{}}`, `{"type":"object","properties":{}}`},
		{`{"type":"object"}`, `{"type":"object"}`},
		{`{"type":"object","properties":{"x":{"type":["string","null"]}}}`, `{"type":"object","properties":{"x":{"type":["string","null"]}}}`},
		{`{"type":"object","properties":{"x":true}}`, `{"type":"object","properties":{"x":true}}`}, // not an object: left as is
		{`not json`, `not json`},
	} {
		if got := string(withoutStringTypes(json.RawMessage(c.in))); got != c.want {
			t.Errorf("withoutStringTypes(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
