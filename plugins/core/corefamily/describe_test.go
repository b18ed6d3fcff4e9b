package corefamily

import (
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/sdk/sdktest"
)

// TestDescribe checks what clients see of the five tools: valid schemas, a
// description on every property, truthful hints, and the token cost.
func TestDescribe(t *testing.T) {
	tools := sdktest.NewFamily(t, "core", Families(nil)).Tools("core")
	var names []string
	for _, tool := range tools {
		names = append(names, tool.GetName())
	}
	want := []string{"memory_store", "memory_recall", "memory_list", "memory_get", "memory_search"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	readOnly := map[string]bool{"memory_get": true, "memory_list": true, "memory_search": true}
	for _, tool := range tools {
		if !tool.GetAlwaysLoad() {
			t.Errorf("%s: not AlwaysLoad", tool.GetName())
		}
		ann := tool.GetAnnotations()
		if ann.GetReadOnly() != readOnly[tool.GetName()] { // unset means not read-only
			t.Errorf("%s: readOnly hint = %v", tool.GetName(), ann.ReadOnly)
		}
		if !readOnly[tool.GetName()] && (ann.Destructive == nil || ann.GetDestructive()) {
			t.Errorf("%s: must say destructive=false", tool.GetName())
		}
	}

	n, _ := sdktest.WireCost(t, tools)
	t.Logf("the 5 core tool definitions cost %d cl100k_base tokens", n)
	// A guard against creep; e2e's TestClaudeCodeSurfaceBudget covers the
	// whole surface as harnesses send it.
	if n > 700 {
		t.Errorf("core tools cost %d tokens; keep them at most 700", n)
	}
}
