package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// inUserNamespace marks the re-run of a test inside `unshare --user
// --map-root-user --mount`, where a non-root user may mount a tmpfs.
const inUserNamespace = "AI_MEMORY_TEST_IN_USERNS"

// smallFilesystem mounts a tmpfs of size bytes on dir, unmounted at the end.
// As root it mounts directly (CI); otherwise the test re-runs itself in a
// user and mount namespace, and ok is false for the outer run, which has
// nothing left to do. Only when neither works is the test skipped.
func smallFilesystem(t *testing.T, dir string, size string) (ok bool) {
	t.Helper()
	if os.Getuid() != 0 {
		if os.Getenv(inUserNamespace) != "" {
			t.Fatal("not root inside the user namespace")
		}
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("a full disk needs a small filesystem: not root, and no unshare(1) to mount a tmpfs in a user namespace")
		}
		if err := commandWithin(t, toolDeadline, "unshare", "--user", "--map-root-user", "--mount", "true").Run(); err != nil {
			t.Skipf("a full disk needs a small filesystem: not root, and user namespaces are unavailable (%v)", err)
		}
		cmd := commandWithin(t, toolDeadline, "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private",
			os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), inUserNamespace+"=1", "AI_MEMORY_TEST_BIN="+bins)
		out, err := cmd.CombinedOutput()
		t.Logf("in a user namespace:\n%s", out)
		if err != nil {
			t.Fatalf("in a user namespace: %v", err)
		}
		return false
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("a full disk needs a small filesystem: mount tmpfs as root failed: %v", err)
	}
	t.Cleanup(func() {
		for _, p := range processesMentioning(dir) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		// Detach: a process still closing its files must not keep the mount.
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return true
}

// fill writes path until the filesystem has no room left.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for _, n := range []int{64 << 10, 4 << 10, 1} { // big steps, then down to the last byte
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill: %v", err)
				}
				break
			}
		}
	}
}

// TestFullDisk: with no space left, a store fails with an error that says
// so, and recall, search, get and list still answer (recall's bookkeeping is
// best effort). After space is freed, the same store works.
func TestFullDisk(t *testing.T) {
	e := newEnv(t)
	if !smallFilesystem(t, e.dataDir, "8m") {
		return
	}
	h := e.startHost(nil)
	stored := h.ok("memory_store", map[string]any{"format": "json", "title": "Disk runbook", "content": "When the disk fills, reads keep working.", "tags": []string{"ops"}})
	id := stored["id"].(string)
	h.ok("memory_recall", map[string]any{"context": "disk fills", "format": "json"})

	filler := filepath.Join(e.dataDir, "filler")
	fill(t, filler)

	// A store needing fresh pages (content and metadata near their limits).
	big := map[string]any{
		"title": "Big note", "content": strings.Repeat("c", 60<<10),
		"metadata": map[string]any{"blob": strings.Repeat("m", 60<<10)},
	}
	text, isErr := h.call("memory_store", big)
	if !isErr || !strings.Contains(text, "no space left on device") || len(text) > maxErrorBytes {
		t.Fatalf("store on a full disk: isError=%v %q; want a short error saying there is no space left", isErr, text)
	}

	recall := h.ok("memory_recall", map[string]any{"context": "disk fills", "format": "json"})
	if mems, _ := recall["memories"].([]any); len(mems) != 1 || mems[0].(map[string]any)["id"] != id {
		t.Errorf("recall on a full disk = %v", recall)
	}
	search := h.ok("memory_search", map[string]any{"query": "disk", "format": "json"})
	if results, _ := search["results"].([]any); len(results) != 1 {
		t.Errorf("search on a full disk = %v", search)
	}
	if got := h.ok("memory_get", map[string]any{"id": id, "format": "json"}); got["content"] != "When the disk fills, reads keep working." {
		t.Errorf("get on a full disk = %v", got)
	}
	if list := h.ok("memory_list", map[string]any{"format": "json"}); list["count"] != float64(1) {
		t.Errorf("list on a full disk = %v", list)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	again := h.ok("memory_store", big)
	if got := h.ok("memory_get", map[string]any{"id": again["id"], "format": "json"}); got["title"] != "Big note" {
		t.Errorf("after space was freed, get = %v", got)
	}
	if list := h.ok("memory_list", map[string]any{"format": "json"}); list["count"] != float64(2) {
		t.Errorf("after space was freed, list = %v", list)
	}
}
