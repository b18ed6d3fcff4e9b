package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A data dir written by release 5d21ae6 (e2e/testdata/datadir-5d21ae6,
// README there) opens with today's binaries, migrates, and reads back.
func TestUpgradeFromRelease5d21ae6(t *testing.T) {
	e := newEnv(t)
	old, err := os.ReadFile(filepath.Join(repoRoot(), "e2e", "testdata", "datadir-5d21ae6", "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dataDir, "memory.db"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	ids := []string{"1c0220c5-80e8-426f-a231-dcd6b8f3b4b8", "a4f34e8d-c255-43af-bb87-293148cad2bc", "52b18a9b-0bab-4f4c-a988-cb7ef7f8d9d4", "2c5113f5-98fd-4bda-82f8-04fa96f97314", "34da793f-0317-4088-b9e8-5a09a77afaed"}
	want := []struct{ title, ns, createdBy, content string }{
		{"Build uses make", "proj/alpha", "ai:claude-code", "The project builds with make build and tests with make test."},
		{"Database is bbolt", "proj/alpha", "ai:codex", "Storage is an embedded bbolt file owned by the engine process."},
		{"Deploy on Fridays is banned", "proj/alpha/ops", "ai:legacy-agent", "Team decision: no deploys on Fridays after 3pm."},
		{"Scratch note", "proj/beta", "ai:gemini", "Temporary observation about flaky test in e2e suite."},
		{"Unicode título ✓", "global", "ai:legacy-agent", "Contenu avec accents: éàü — and emoji 🚀."},
	}

	h := e.startHost([]string{"--profile", "graph", "--agent-id", "ai:upgrader"})
	for i, id := range ids {
		got := h.ok("memory_get", map[string]any{"id": id, "format": "json"})
		w := want[i]
		if got["title"] != w.title || got["namespace"] != w.ns || got["content"] != w.content || got["tier"] != "long" {
			t.Errorf("memory %d after upgrade: %v", i, got)
		}
		// Migrated authorship: created_by from the old metadata.agent_id.
		if got["created_by"] != w.createdBy {
			t.Errorf("memory %d: created_by %v, want %s", i, got["created_by"], w.createdBy)
		}
	}
	if got := h.ok("memory_get", map[string]any{"id": ids[0], "format": "json"}); got["access_count"] == nil {
		t.Errorf("the recall's access count was lost: %v", got)
	}
	links := h.ok("memory_get_links", map[string]any{"id": ids[0]})
	raw, _ := json.Marshal(links)
	if !strings.Contains(string(raw), ids[1]) || !strings.Contains(string(raw), ids[2]) || links["count"] != float64(2) {
		t.Errorf("links after upgrade: %s", raw)
	}
	ent := h.ok("memory_entity_get_by_alias", map[string]any{"alias": "BoltDB"})
	if ent["found"] != true || ent["canonical_name"] != "bbolt" {
		t.Errorf("entity alias after upgrade: %v", ent)
	}
	if out := h.ok("memory_search", map[string]any{"query": "deploys fridays", "format": "json"}); len(items(out)) != 1 {
		t.Errorf("search after upgrade: %v", out)
	}
	// New writes work and are attributed by the new rules.
	n := h.ok("memory_store", map[string]any{"format": "json", "title": "After upgrade", "content": "written by the new release"})
	if got := h.ok("memory_get", map[string]any{"id": n["id"], "format": "json"}); got["created_by"] != "ai:upgrader" {
		t.Errorf("new memory: %v", got)
	}
	if out, code := e.cli("audit", "verify"); code != 0 {
		t.Errorf("audit verify after upgrade: %d %s", code, out)
	}
	h.close()

	// Once every process is gone, bbolt's own check passes on the migrated file.
	eventually(t, 20*time.Second, "the engine to exit", func() bool { return len(e.enginePids()) == 0 })
	checkBolt(t, filepath.Join(e.dataDir, "memory.db"))
}
