package harness

import (
	"encoding/json"
	"testing"
)

func TestScriptedCountsModelTurnsAfterTheMarker(t *testing.T) {
	var msgs []any
	json.Unmarshal([]byte(`[{"role":"user","content":"SCRIPT:old"},{"role":"assistant"},
		{"role":"user","content":[{"type":"text","text":"go SCRIPT:work now"}]},{"role":"assistant"},{"role":"user","content":[{"type":"tool_result"}]},{"role":"assistant"}]`), &msgs)
	key, turns := scripted(msgs, func(m map[string]any) (string, bool) { return textOf(m["content"]), m["role"] == "user" },
		func(m map[string]any) bool { return m["role"] == "assistant" })
	if key != "work" || turns != 2 {
		t.Fatalf("scripted = %q, %d; want work, 2", key, turns)
	}
}

func TestResolveMatchesEachHarnessNaming(t *testing.T) {
	for _, c := range []struct {
		names   []string
		want    string
		offered bool
	}{
		{[]string{"Bash", "mcp__ai-memory__memory_store", "mcp__ai-memory__memory_link"}, "mcp__ai-memory__memory_link", true},
		{[]string{"mcp_ai-memory_memory_store"}, "mcp_ai-memory_memory_link", false}, // not offered: called under the server's prefix
		{[]string{"memory_store", "memory_link"}, "memory_link", true},               // Codex: plain names in a namespace
		{[]string{"mcp__ai-memory__memory_unlink"}, "memory_link", false},            // a suffix without a separator is another tool
	} {
		got, offered := resolve(Call("memory_link", nil), c.names)
		if got != c.want || offered != c.offered {
			t.Errorf("%v: %q, %v; want %q, %v", c.names, got, offered, c.want, c.offered)
		}
	}
}

func TestInspectReadsEachProvider(t *testing.T) {
	for name, c := range map[string]struct {
		body   string
		tools  []string
		result string
	}{
		"anthropic": {`{"tools":[{"name":"mcp__ai-memory__memory_store"},{"name":"mcp__ai-memory__memory_link","defer_loading":true},{"name":"Bash"}],
			"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__ai-memory__memory_store"}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"stored"}]}]}]}`,
			[]string{"memory_store"}, "stored"},
		"openai": {`{"tools":[{"type":"namespace","name":"mcp__ai_memory","tools":[{"name":"memory_store"}]}],
			"input":[{"type":"function_call","namespace":"mcp__ai_memory","name":"memory_store","call_id":"c1"},
			{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"stored"}]}]}`,
			[]string{"memory_store"}, "stored"},
		"gemini": {`{"tools":[{"functionDeclarations":[{"name":"mcp_ai-memory_memory_store"},{"name":"read_file"}]}],
			"contents":[{"role":"user","parts":[{"functionResponse":{"name":"mcp_ai-memory_memory_store","response":{"output":"stored"}}}]}]}`,
			[]string{"memory_store"}, "stored"},
	} {
		s := Inspect([]byte(c.body))
		r, ok := s.ResultOf("memory_store")
		if len(s.Tools) != 1 || s.Tools[0] != c.tools[0] || s.DefBytes() == 0 || !ok || r.Text != c.result || r.IsError {
			t.Errorf("%s: tools %v, %d bytes, result %+v (found %v)", name, s.Tools, s.DefBytes(), r, ok)
		}
	}
}
