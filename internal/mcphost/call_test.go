package mcphost

import (
	"context"
	"strings"
	"testing"
)

// Call runs a tool as the bridge does: a loaded family's tool at once, one
// the identity is not cleared for refused and audited, an unknown one named.
func TestCall(t *testing.T) {
	p := &fakePlugins{}
	h, audit := newTestHost(t, p, withAllowlist(t, map[string][]string{"tester": {"core"}}))
	text, isErr := h.Call(context.Background(), "memory_get", []byte(`{"id":"abc"}`))
	if isErr || !strings.Contains(string(text), `"tool":"memory_get"`) || !strings.Contains(string(text), `"agent_id":"tester"`) {
		t.Errorf("memory_get: %s (error %v)", text, isErr)
	}
	text, isErr = h.Call(context.Background(), "test_echo", nil)
	if !isErr || !strings.Contains(string(text), "not cleared for the echo family") {
		t.Errorf("test_echo outside the allowlist: %s (error %v)", text, isErr)
	}
	if e := audit.all(); len(e) != 1 || e[0].Event != "call_denied" || e[0].Tool != "test_echo" {
		t.Errorf("audit: %+v", e)
	}
	if text, isErr = h.Call(context.Background(), "nope", nil); !isErr || !strings.Contains(string(text), `unknown tool "nope"`) {
		t.Errorf("unknown tool: %s (error %v)", text, isErr)
	}
	if !h.Callable("memory_get") || h.Callable("test_echo") || h.Callable("nope") {
		t.Errorf("callable: memory_get %v, test_echo %v, nope %v", h.Callable("memory_get"), h.Callable("test_echo"), h.Callable("nope"))
	}
	if len(p.calls) != 1 {
		t.Errorf("plugin calls: %v, want memory_get alone", p.calls)
	}
}
