package mcphost

import (
	"strings"
	"testing"
)

func TestDecodeCapabilitiesArgs(t *testing.T) {
	cases := []struct{ in, err string }{
		{`{}`, ""},
		{`{"family":"graph"}`, ""},
		{`{"family":"graph","include_schema":true}`, ""},
		{`{"tool":"memory_link","arguments":{"a":1}}`, ""},
		{`{"tool":"memory_link"}`, ""},
		{`{"accept":"v1"}`, ""},
		{`{"family":""}`, "family: must not be empty"},
		{`{"family":"Graph"}`, `family: unknown family "Graph"`},
		{`{"family":7}`, "family: must be a string"},
		{`{"include_schema":true}`, "include_schema: needs family"},
		{`{"include_schema":"yes","family":"graph"}`, "include_schema: must be a boolean"},
		{`{"tool":""}`, "tool: must be a non-empty string"},
		{`{"tool":"x","family":"graph"}`, "not both"},
		{`{"arguments":{}}`, "arguments: needs tool"},
		{`{"tool":"x","arguments":[1]}`, "arguments: must be a JSON object"},
		{`{"accept":"v3"}`, "accept:"},
		{`{"agent_id":"root"}`, `"agent_id": unknown argument`},
		{`{"family":"echo"}`, ""},
		{`{"family":"` + strings.Repeat("x", 100000) + `"}`, "(100000 bytes); one of core, lifecycle"},
		{`[1]`, "arguments: must be a JSON object"},
	}
	for _, c := range cases {
		_, err := decodeCapabilitiesArgs([]byte(c.in), testSet)
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("%.40s: error is %d bytes", c.in, len(err.Error()))
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%.40s: unexpected error %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%.40s: error %.200v, want containing %q", c.in, err, c.err)
		}
	}
}

func FuzzDecodeCapabilitiesArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"family":"graph","include_schema":true}`, `{"tool":"t","arguments":{"x":[1,{"y":null}]}}`, `null`, `"x"`, `{"family":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := decodeCapabilitiesArgs(raw, testSet)
		if err == nil && a.includeSchema && a.family == nil {
			t.Fatalf("include_schema without family accepted: %s", raw)
		}
	})
}
