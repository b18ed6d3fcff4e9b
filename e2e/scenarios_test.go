package e2e

import (
	"slices"
	"strings"
	"testing"
)

// S27: memory_capabilities is listed and callable under every named profile
// and a custom list.
func TestCapabilitiesUnderEveryProfile(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"core", "graph", "admin", "power", "full", "core,archive"} {
		h := e.startHost([]string{"--profile", p})
		if !slices.Contains(h.toolNames(), "memory_capabilities") {
			t.Errorf("%s: memory_capabilities not listed", p)
		}
		if doc := h.ok("memory_capabilities", map[string]any{}); doc["profile"] == nil {
			t.Errorf("%s: overview = %v", p, doc)
		}
	}
}

// S30: a comma list is the union of its families and equals the named
// profile with the same families: core,graph = graph = 13 family tools + 1.
func TestCommaListEqualsNamedProfile(t *testing.T) {
	e := newEnv(t)
	union := sorted(e.startHost([]string{"--profile", "core,graph"}).toolNames())
	named := sorted(e.startHost([]string{"--profile", "graph"}).toolNames())
	if !slices.Equal(union, named) || len(union) != 14 {
		t.Fatalf("core,graph = %v (%d), graph = %v", union, len(union), named)
	}
}

func TestExpansionRateLimit(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`[mcp]
expansion_interval = "1h"
[mcp.allowlist]
"*" = ["full"]
`)
	h := e.startHost(nil)
	h.ok("memory_capabilities", map[string]any{"family": "graph", "include_schema": true})
	h.fails("memory_capabilities", map[string]any{"family": "echo", "include_schema": true}, "one new family per 1h0m0s")
	// Loading a family again is not a new family.
	h.ok("memory_capabilities", map[string]any{"family": "graph", "include_schema": true})
	if slices.Contains(h.toolNames(), "test_echo") {
		t.Fatal("a rate-limited family was registered")
	}
	out, _ := e.cli("audit", "list")
	if !strings.Contains(out, "rate_limited") || strings.Count(out, "ALLOW") != 2 {
		t.Fatalf("audit after a rate-limited expansion:\n%s", out)
	}
}
