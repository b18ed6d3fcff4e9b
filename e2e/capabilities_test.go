package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func TestCapabilitiesOverview(t *testing.T) {
	h := newEnv(t).startHost(nil)
	doc := h.ok("memory_capabilities", map[string]any{})
	fams, _ := doc["families"].(map[string]any)
	if fams["schema_version"] != "v0.6.4-families-1" {
		t.Fatalf("families block = %v", doc)
	}
	rows, _ := fams["families"].([]any)
	var names []string
	for _, r := range rows {
		row := r.(map[string]any)
		names = append(names, row["name"].(string))
		switch row["name"] {
		case "core":
			if row["loaded"] != true || row["tool_count"] != float64(5) {
				t.Errorf("core row = %v", row)
			}
		case "echo": // a third-party family, listed after the first-party ones
			if row["loaded"] != false || !slices.Contains(toStrings(row["tools"]), "test_echo") || row["installed"] != nil {
				t.Errorf("echo row = %v", row)
			}
		case "other": // installed: the admin plugin serves it
			if row["installed"] != nil || !slices.Contains(toStrings(row["tools"]), "memory_notify") {
				t.Errorf("other row = %v", row)
			}
		case "lifecycle": // installed (the admin plugin), not loaded under core
			if row["installed"] != nil || row["loaded"] != false || !slices.Contains(toStrings(row["tools"]), "memory_promote") {
				t.Errorf("lifecycle row = %v", row)
			}
		}
	}
	want := []string{"core", "lifecycle", "graph", "governance", "power", "meta", "archive", "other", "echo"}
	if !slices.Equal(names, want) {
		t.Errorf("families = %v, want %v", names, want)
	}
	if !slices.Contains(toStrings(fams["always_on"]), "memory_capabilities") {
		t.Errorf("always_on = %v", fams["always_on"])
	}

	list := h.ok("memory_capabilities", map[string]any{"family": "echo"})
	if list["loaded"] != false || !slices.Equal(toStrings(list["tools"]), []string{"test_echo"}) {
		t.Errorf("family list = %v", list)
	}
	h.fails("memory_capabilities", map[string]any{"family": ""}, "family")
	h.fails("memory_capabilities", map[string]any{"family": "gaph"}, "core, lifecycle, graph")
	h.fails("memory_capabilities", map[string]any{"include_schema": true}, "include_schema")
	h.fails("memory_capabilities", map[string]any{"family": 3}, "family")
}

func TestExpansionRegistersToolsAndNotifies(t *testing.T) {
	h := newEnv(t).startHost(nil)
	h.fails("test_echo", map[string]any{}, "memory_capabilities")

	res := h.ok("memory_capabilities", map[string]any{"family": "echo", "include_schema": true})
	tools, _ := res["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("schemas = %v", res)
	}
	def := tools[0].(map[string]any)
	if def["name"] != "test_echo" || def["inputSchema"] == nil || def["description"] == "" {
		t.Fatalf("definition = %v", def)
	}
	eventually(t, 5*time.Second, "tools/list_changed", func() bool { return h.sawNotification("notifications/tools/list_changed") })
	if !slices.Contains(h.toolNames(), "test_echo") {
		t.Fatal("expanded tool not in tools/list")
	}
	out := h.ok("test_echo", map[string]any{"say": "hi", "agent_id": "someone-else"})
	if out["agent_id"] != "ai:e2e-harness" || out["client"] != "e2e-harness" || out["session"] == "" {
		t.Fatalf("call context = %v", out)
	}
	raw, _ := json.Marshal(out["args"])
	if string(raw) != `{"agent_id":"someone-else","say":"hi"}` {
		t.Fatalf("arguments reached the plugin as %s", raw)
	}
}

func toStrings(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
