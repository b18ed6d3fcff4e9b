package e2e

import (
	"slices"
	"testing"
)

func TestAllowlistGatesGrantBridgeAndCalls(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`[mcp]
expansion_interval = "0"
[mcp.allowlist]
"ai:e2e" = ["core"]
"trusted" = ["full"]
`)
	// ai:e2e-harness matches the "ai:e2e" prefix row: core only.
	h := e.startHost(nil)
	h.fails("memory_capabilities", map[string]any{"family": "echo", "include_schema": true}, "not cleared for the echo family")
	// A per-call agent_id cannot widen what the session may do.
	h.fails("memory_capabilities", map[string]any{"family": "echo", "include_schema": true, "agent_id": "trusted"}, "agent_id")
	h.fails("memory_capabilities", map[string]any{"tool": "test_echo", "arguments": map[string]any{"agent_id": "trusted"}}, "not cleared")
	h.fails("test_echo", map[string]any{"agent_id": "trusted"}, "not cleared")
	if slices.Contains(h.toolNames(), "test_echo") {
		t.Fatal("a denied family's tools were registered")
	}
	h.ok("memory_store", map[string]any{"format": "json", "title": "core still works", "content": "yes"})

	// The trusted identity may load it, and use it directly or through the bridge.
	trusted := e.startHost(nil, "AI_MEMORY_AGENT_ID=trusted")
	trusted.ok("memory_capabilities", map[string]any{"family": "echo", "include_schema": true})
	if out := trusted.ok("test_echo", map[string]any{"say": "direct"}); out["agent_id"] != "trusted" {
		t.Fatalf("direct call = %v", out)
	}
	if out := trusted.ok("memory_capabilities", map[string]any{"tool": "test_echo", "arguments": map[string]any{"say": "bridged"}}); out["args"].(map[string]any)["say"] != "bridged" {
		t.Fatalf("bridged call = %v", out)
	}

	// A profile family the identity is not cleared for is not served to it.
	p := e.startHost([]string{"--profile", "core,echo"})
	if slices.Contains(p.toolNames(), "test_echo") {
		t.Fatal("profile family served to an identity the allowlist does not clear")
	}
}

func TestBridgeServesClientsThatNeverRefresh(t *testing.T) {
	// A raw client that ignores notifications and never lists tools again.
	s := newEnv(t).startRaw()
	call := func(args map[string]any) (string, bool) {
		return toolResult(s.request("tools/call", map[string]any{"name": "memory_capabilities", "arguments": args}))
	}
	// One call, no expansion first: the bridge grants the family on first use.
	text, isErr := call(map[string]any{"tool": "test_echo", "arguments": map[string]any{"say": "hi"}})
	if isErr || !contains(text, `"say":"hi"`) {
		t.Fatalf("bridge to a family not loaded yet: %q", text)
	}
	text, isErr = call(map[string]any{"tool": "test_echo", "arguments": map[string]any{"say": "again"}})
	if isErr || !contains(text, `"say":"again"`) {
		t.Fatalf("bridge after the grant: %q", text)
	}
	// The bridge returns a core tool's result unchanged, errors included.
	if text, isErr := call(map[string]any{"tool": "memory_get", "arguments": map[string]any{}}); !isErr || !contains(text, "id") {
		t.Fatalf("bridged validation error: %q", text)
	}
	if text, isErr := call(map[string]any{"tool": "memory_nope"}); !isErr || !contains(text, "unknown tool") {
		t.Fatalf("bridge to an unknown tool: %q", text)
	}
	// The wire surface stays exactly the six tools: the bridge grants, it does not register.
	resp := s.request("tools/list", map[string]any{})
	tools := resp["result"].(map[string]any)["tools"].([]any)
	if len(tools) != 6 {
		t.Fatalf("tools/list after bridged calls has %d tools", len(tools))
	}
}

func TestRedactedDiscovery(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`[mcp]
redacted_discovery = true
[mcp.allowlist]
"*" = ["core", "graph"]
`)
	h := e.startHost(nil)
	doc := h.ok("memory_capabilities", map[string]any{})
	var names []string
	for _, r := range doc["families"].(map[string]any)["families"].([]any) {
		names = append(names, r.(map[string]any)["name"].(string))
	}
	if !slices.Equal(names, []string{"core", "graph"}) {
		t.Fatalf("redacted overview lists %v", names)
	}
	h.fails("memory_capabilities", map[string]any{"family": "other"}, "unknown family")
}
