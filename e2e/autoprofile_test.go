package e2e

import (
	"strings"
	"testing"
	"time"
)

func TestAutoProfileOnlyObservesAndLogsOnce(t *testing.T) {
	h := newEnv(t).startHost([]string{"--auto-profile"})
	for i := range 4 {
		h.ok("memory_store", map[string]any{"format": "json", "title": "burst " + string(rune('a'+i)), "content": "c", "namespace": "proj"})
	}
	h.fails("test_echo", map[string]any{}, "echo family")
	h.fails("test_echo", map[string]any{}, "echo family")
	eventually(t, 5*time.Second, "suggestions on stderr", func() bool {
		return strings.Contains(h.stderr.String(), "rule=unloaded_call")
	})
	logs := h.stderr.String()
	if n := strings.Count(logs, "rule=store_burst"); n != 1 || !strings.Contains(logs, "suggested_profile=power") || !strings.Contains(logs, "namespace=proj") {
		t.Errorf("store burst suggestions: %d\n%s", n, logs)
	}
	if n := strings.Count(logs, "rule=unloaded_call"); n != 1 || !strings.Contains(logs, "family=echo") {
		t.Errorf("unloaded call suggestions: %d\n%s", n, logs)
	}
	// Observe only: nothing was loaded.
	for _, name := range h.toolNames() {
		if name == "test_echo" {
			t.Fatal("--auto-profile changed the tool surface")
		}
	}
}
