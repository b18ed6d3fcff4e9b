package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// An engine whose data dir was deleted and recreated under it must not
// remove its successor's socket when it exits: every host started after
// that found no socket, could not start an engine (the successor holds
// the lock) and timed out.
func TestEngineRemovesOnlyItsOwnSocket(t *testing.T) {
	e := newEnv(t)
	first := e.startHost(nil)
	first.ok("memory_store", map[string]any{"title": "in the old dir", "content": "x"})
	old := e.enginePids()
	if len(old) != 1 {
		t.Fatalf("engines before the data dir was recreated: %v, want one", old)
	}

	if err := os.RemoveAll(e.dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	second := e.startHost(nil)
	second.ok("memory_store", map[string]any{"title": "in the new dir", "content": "x"})
	sock := filepath.Join(e.dataDir, "engine.sock")
	before, err := os.Lstat(sock)
	if err != nil {
		t.Fatalf("the new engine's socket: %v", err)
	}

	// The old engine idles out once its host is gone (3 s in tests).
	first.close()
	eventually(t, 20*time.Second, "the old engine to exit", func() bool { return !slices.Contains(e.enginePids(), old[0]) })

	after, err := os.Lstat(sock)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the new engine's socket after the old engine exited: %v (same file: %v)", err, err == nil && os.SameFile(before, after))
	}
	third := e.startHost(nil)
	if got := third.ok("memory_list", map[string]any{"format": "json"}); got["count"] != float64(1) {
		t.Fatalf("a host started after the old engine exited sees %v memories, want the new dir's one", got["count"])
	}
}
