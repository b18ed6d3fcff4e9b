package graphfamily

import (
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/sdk/sdktest"
)

// TestDescribe checks what clients see of the eight tools: valid schemas, a
// description on every property, truthful hints, and the token cost (the
// reference's eight graph tools cost 1,694 cl100k_base tokens).
func TestDescribe(t *testing.T) {
	tools := sdktest.NewFamily(t, "graph", Families(nil)).Tools("graph")
	var names []string
	for _, tool := range tools {
		names = append(names, tool.GetName())
	}
	want := []string{"memory_kg_query", "memory_kg_timeline", "memory_kg_invalidate", "memory_link",
		"memory_get_links", "memory_entity_register", "memory_entity_get_by_alias", "memory_get_taxonomy"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	writers := map[string]bool{"memory_link": true, "memory_kg_invalidate": true, "memory_entity_register": true}
	for _, tool := range tools {
		if tool.GetAlwaysLoad() {
			t.Errorf("%s: AlwaysLoad is for the core tools only", tool.GetName())
		}
		ann := tool.GetAnnotations()
		if writers[tool.GetName()] {
			if ann.ReadOnly != nil || ann.Destructive == nil || ann.GetDestructive() {
				t.Errorf("%s writes without destroying: want destructive=false only, got %v", tool.GetName(), ann)
			}
		} else if !ann.GetReadOnly() || ann.Destructive != nil {
			t.Errorf("%s reads: want readOnly only, got %v", tool.GetName(), ann)
		}
	}

	n, each := sdktest.WireCost(t, tools)
	largest, largestName := 0, ""
	for name, c := range each {
		t.Logf("%-28s %3d tokens", name, c)
		if c > largest {
			largest, largestName = c, name
		}
		if c > 180 {
			t.Errorf("%s costs %d tokens; keep each tool at most 180", name, c)
		}
	}
	t.Logf("the 8 graph tool definitions cost %d cl100k_base tokens (reference 1,694); largest %s %d", n, largestName, largest)
	if n > 785 {
		t.Errorf("graph tools cost %d tokens; keep them at most 785", n)
	}
}
