package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// logLine returns the first stderr line containing every one of parts.
func logLine(logs string, parts ...string) string {
	for _, line := range strings.Split(logs, "\n") {
		if contains(line, parts...) {
			return line
		}
	}
	return ""
}

func TestPluginsDeclaringTakenNamesAreRefused(t *testing.T) {
	e := newEnv(t)
	e.pin("taken-tool", "taken-family", "dup-a", "dup-b")
	h := e.startHost([]string{"--profile", "full"})
	logs := h.stderr.String()
	for _, want := range [][]string{
		// The error names the plugin, the taken name and who holds it.
		{"plugin testplugin-taken-tool refused", "memory_store", `family \"evil\"`, "core family"},
		{"plugin testplugin-taken-family refused", `family \"graph\"`, "first-party"},
		{"plugin testplugin-dup-a refused", `family \"dup\"`, "plugin testplugin-dup-b declares too"},
		{"plugin testplugin-dup-b refused", `family \"dup\"`, "plugin testplugin-dup-a declares too"},
	} {
		if logLine(logs, want...) == "" {
			t.Errorf("no refusal naming %q in stderr:\n%s", want, logs)
		}
	}
	// The rest is served: core's memory_store, the real graph, lifecycle,
	// governance, power, archive and meta, the echo family.
	want := sorted(append(slices.Concat(coreSurface, graphTools, lifecycleTools, governanceSurface, hooksTools, powerTools, archiveTools, metaTools), "test_echo"))
	if got := sorted(h.toolNames()); !slices.Equal(got, want) {
		t.Fatalf("tools/list under full = %v, want %v", got, want)
	}
	stored := h.ok("memory_store", map[string]any{"format": "json", "title": "still core's", "content": "the pinned plugin did not replace it"})
	if stored["id"] == nil || stored["pid"] != nil {
		t.Fatalf("memory_store answered by the wrong plugin: %v", stored)
	}
	if out := h.ok("memory_get_taxonomy", map[string]any{}); out["pid"] != nil {
		t.Fatalf("graph answered by the refused plugin: %v", out)
	}
	doc := h.ok("memory_capabilities", map[string]any{})
	for _, r := range doc["families"].(map[string]any)["families"].([]any) {
		if name := r.(map[string]any)["name"]; name == "evil" || name == "dup" {
			t.Errorf("refused family %s listed", name)
		}
	}
	// The refused plugins, launched once to describe themselves, are gone.
	eventually(t, 5*time.Second, "refused plugins to exit", func() bool {
		return len(processesMentioning("testplugin-taken")) == 0 && len(processesMentioning("testplugin-dup")) == 0
	})

	// Naming a refused plugin's family in --profile starts the host anyway; that family alone is left out.
	p := e.startHost([]string{"--profile", "core,dup"})
	if got := sorted(p.toolNames()); !slices.Equal(got, coreSurface) {
		t.Errorf("tools/list under core,dup = %v", got)
	}
	if logLine(p.stderr.String(), "family in profile is not available", "dup", "refused") == "" {
		t.Errorf("no warning for the refused family in the profile:\n%s", p.stderr.String())
	}
}

func TestThirdPartyFamilyNameInProfileAndAllowlist(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"--profile", "echo"}, {"--profile", "graph,echo"}} {
		h := e.startHost(args)
		if !slices.Contains(h.toolNames(), "test_echo") {
			t.Fatalf("%v: test_echo not listed", args)
		}
		if out := h.ok("test_echo", map[string]any{"say": "x"}); out["agent_id"] != "ai:e2e-harness" {
			t.Fatalf("%v: %v", args, out)
		}
		if doc := h.ok("memory_capabilities", map[string]any{}); !strings.Contains(doc["profile"].(string), "echo") {
			t.Errorf("%v: profile label %v", args, doc["profile"])
		}
	}
	// A name no plugin declares exits 2 and lists the plugin's family among the valid ones.
	cmd := command(t, filepath.Join(e.binDir, "ai-memory"), "mcp", "--profile", "core,ech")
	cmd.Env = e.environ()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !contains(string(out), `"ech"`, "families are core, lifecycle, graph, governance, power, meta, archive, other, echo") {
		t.Fatalf("unknown family: %v\n%s", err, out)
	}
	// An allowlist row may name it too.
	e.writeConfig("[mcp]\nexpansion_interval = \"0\"\n[mcp.allowlist]\n\"*\" = [\"core\", \"echo\"]\n")
	h := e.startHost(nil)
	h.ok("memory_capabilities", map[string]any{"family": "echo", "include_schema": true})
	h.fails("memory_capabilities", map[string]any{"family": "graph", "include_schema": true}, "not cleared for the graph family")
}

func TestBridgeGrantsOnFirstUse(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`[mcp]
expansion_interval = "1h"
[mcp.allowlist]
"ai:e2e" = ["core", "echo", "graph"]
"mallory" = ["core"]
`)
	h := e.startHost(nil)
	// One call, no expansion before it.
	out := h.ok("memory_capabilities", map[string]any{"tool": "test_echo", "arguments": map[string]any{"say": "one call"}})
	if args, _ := out["args"].(map[string]any); args["say"] != "one call" {
		t.Fatalf("bridged first use = %v", out)
	}
	// Granted, but nothing registered: the session's tool list is as it was.
	if names := h.toolNames(); slices.Contains(names, "test_echo") {
		t.Fatalf("the bridge grew the surface: tools %v", names)
	}
	// Rate-limited like any expansion: a second new family within the interval.
	h.fails("memory_capabilities", map[string]any{"tool": "memory_get_taxonomy", "arguments": map[string]any{}}, "one new family per 1h0m0s")
	// An identity not cleared gets the same denial as a direct call.
	m := e.startHost(nil, "AI_MEMORY_AGENT_ID=mallory")
	direct, _ := m.call("test_echo", map[string]any{})
	bridged, isErr := m.call("memory_capabilities", map[string]any{"tool": "test_echo", "arguments": map[string]any{}})
	if !isErr || bridged != direct || !strings.Contains(bridged, "not cleared for the echo family") {
		t.Fatalf("denied bridge = %q, direct = %q", bridged, direct)
	}

	raw, code := e.cli("audit", "list", "--json")
	if code != 0 {
		t.Fatalf("audit list: %d %s", code, raw)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(raw), &rows); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range slices.Backward(rows) {
		got = append(got, strings.Join([]string{r["agent_id"].(string), r["event_type"].(string), r["family"].(string), boolWord(r["granted"])}, " "))
	}
	want := []string{
		"ai:e2e-harness capability_expansion echo granted",
		"ai:e2e-harness capability_expansion graph denied",
		"mallory call_denied echo denied",
		"mallory call_denied echo denied",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("audit rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func boolWord(v any) string {
	if v == true {
		return "granted"
	}
	return "denied"
}
