package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBackupOfALiveDataDir backs a data dir up while a host writes to it,
// restores the copy into an empty data dir, and compares memory_get of
// every memory the backup holds; restore never overwrites a database.
func TestBackupOfALiveDataDir(t *testing.T) {
	e := newEnv(t)
	h := e.startHost(nil)
	var ids []string
	for i := range 50 {
		m := h.ok("memory_store", map[string]any{"format": "json", "title": fmt.Sprintf("before %d", i), "content": fmt.Sprintf("written before the backup, number %d", i)})
		ids = append(ids, m["id"].(string))
	}
	cli := func(dataDir string, args ...string) (string, error) {
		cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
		cmd.Env = append(e.environ(), "AI_MEMORY_DATA_DIR="+dataDir) // the later value wins
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Writes go on during the backup.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, isErr, err := h.tryCall("memory_store", map[string]any{"title": fmt.Sprintf("during %d", i), "content": "written while the backup ran"}); err != nil || isErr {
				return
			}
		}
	}()
	file := filepath.Join(filepath.Dir(e.dataDir), "backup.db")
	out, err := cli(e.dataDir, "backup", file)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	restored := filepath.Join(filepath.Dir(e.dataDir), "r")
	if out, err := cli(restored, "restore", file); err != nil || !strings.Contains(out, "restored") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if out, err := cli(restored, "restore", file); err == nil || !strings.Contains(out, "already has a database") {
		t.Fatalf("restore over a database: %v\n%s", err, out)
	}
	r := (&env{t: t, dataDir: restored, config: e.config, binDir: bins}).startHost(nil)
	for _, id := range ids {
		want, _ := h.call("memory_get", map[string]any{"id": id})
		got, isErr := r.call("memory_get", map[string]any{"id": id})
		if isErr || got != want {
			t.Fatalf("memory_get %s after restore:\n got %s\nwant %s", id, got, want)
		}
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(e.dataDir), "junk"), []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := cli(filepath.Join(filepath.Dir(e.dataDir), "r2"), "restore", filepath.Join(filepath.Dir(e.dataDir), "junk")); err == nil || !strings.Contains(out, "not an ai-memory backup") {
		t.Fatalf("restore of junk: %v\n%s", err, out)
	}
}
