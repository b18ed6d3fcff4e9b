package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// enginePids lists the engine processes serving a data dir (the only
// processes whose command line names it).
func (e *env) enginePids() []int { return processesMentioning(e.dataDir) }

func TestTwoHostsShareOneDataDir(t *testing.T) {
	e := newEnv(t)
	a, b := e.startHost(nil), e.startHost(nil)
	var wg sync.WaitGroup
	for name, h := range map[string]*host{"a": a, "b": b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				text, isErr, err := h.tryCall("memory_store", map[string]any{
					"title": fmt.Sprintf("note %d", i), "content": fmt.Sprintf("written by host %s, number %d", name, i), "namespace": "host-" + name,
				})
				if err != nil || isErr {
					t.Errorf("host %s store %d: %v %s", name, i, err, text)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, h := range []*host{a, b} {
		for _, ns := range []string{"host-a", "host-b"} {
			if got := h.ok("memory_list", map[string]any{"namespace": ns, "limit": 200, "format": "json"}); got["count"] != float64(200) {
				t.Fatalf("a host sees %v memories in %s, want 200", got["count"], ns)
			}
		}
	}
	if n := len(e.enginePids()); n != 1 {
		t.Fatalf("%d engines serve the data dir, want 1", n)
	}

	a.kill9()
	stored := b.ok("memory_store", map[string]any{"format": "json", "title": "after a died", "content": "b still writes"})
	if got := b.ok("memory_get", map[string]any{"id": stored["id"], "format": "json"}); got["content"] != "b still writes" {
		t.Fatalf("second host after the first was killed: %v", got)
	}
}

func TestKillNineLosesNoAcknowledgedWrite(t *testing.T) {
	e := newEnv(t)
	h := e.startHost(nil)
	first := h.ok("memory_store", map[string]any{"format": "json", "title": "durable", "content": "acknowledged before the kill"})
	h.kill9()

	h2 := e.startHost(nil)
	if got := h2.ok("memory_get", map[string]any{"id": first["id"], "format": "json"}); got["content"] != "acknowledged before the kill" {
		t.Fatalf("after host kill -9: %v", got)
	}
	second := h2.ok("memory_store", map[string]any{"format": "json", "title": "durable 2", "content": "acknowledged before the engine died"})
	killed := e.enginePids()
	for _, pid := range killed {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	// The host may respawn an engine at once, so wait for the killed ones only.
	eventually(t, 5*time.Second, "the killed engine to die", func() bool {
		return !slices.ContainsFunc(e.enginePids(), func(pid int) bool { return slices.Contains(killed, pid) })
	})

	// The host respawns the engine; both writes are there.
	eventually(t, 15*time.Second, "engine to come back", func() bool {
		text, isErr, err := h2.tryCall("memory_get", map[string]any{"id": second["id"]})
		return err == nil && !isErr && len(text) > 0
	})
	if got := h2.ok("memory_get", map[string]any{"id": first["id"], "format": "json"}); got["id"] != first["id"] {
		t.Fatalf("first write lost: %v", got)
	}

	// With every process gone, the bbolt file opens clean and passes a consistency check.
	h2.kill9()
	for _, pid := range e.enginePids() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	eventually(t, 5*time.Second, "engine to die", func() bool { return len(e.enginePids()) == 0 })
	checkBolt(t, filepath.Join(e.dataDir, "memory.db"))
}

func TestKilledPluginIsReplacedOnNextCall(t *testing.T) {
	e := newEnv(t)
	h := e.startHost([]string{"--profile", "core,echo"})

	// A plugin that dies in the middle of a call: that call gets the clear
	// error, and the next one runs on a fresh plugin.
	h.ok("test_echo", map[string]any{"say": "before"})
	first := childrenOf(h.pid(), "testplugin")
	if text, isErr := h.call("test_echo", map[string]any{"crash": true}); !isErr || !contains(text, "testplugin", "test_echo", "restarted") {
		t.Errorf("a call whose plugin died: isError=%v %q; want an error naming the plugin, the tool and the restart", isErr, text)
	}
	if out := h.ok("test_echo", map[string]any{"say": "after"}); out["args"].(map[string]any)["say"] != "after" {
		t.Fatalf("after the crash: %v", out)
	}
	if now := childrenOf(h.pid(), "testplugin"); len(now) != 1 || len(first) != 1 || now[0] == first[0] {
		t.Fatalf("test plugin processes before %v, after %v; want one fresh one", first, now)
	}

	// A plugin killed while idle: a fresh one serves the next calls. The
	// host may notice the death first (no error) or on the call (the error
	// above); either way it takes at most one call.
	h.ok("memory_store", map[string]any{"format": "json", "title": "before", "content": "plugin alive"})
	plugins := childrenOf(h.pid(), "ai-memory-core")
	if len(plugins) != 1 {
		t.Fatalf("core plugin processes of the host: %v", plugins)
	}
	syscall.Kill(plugins[0], syscall.SIGKILL)
	eventually(t, 5*time.Second, "plugin to die", func() bool { return len(childrenOf(h.pid(), "ai-memory-core")) == 0 })
	for attempt := 1; ; attempt++ {
		text, isErr := h.call("memory_list", map[string]any{"format": "json"})
		if !isErr {
			break
		}
		if attempt > 1 || !contains(text, "ai-memory-core", "restarted") {
			t.Fatalf("call %d after an idle plugin died: %q", attempt, text)
		}
	}
	if n := len(childrenOf(h.pid(), "ai-memory-core")); n != 1 {
		t.Fatalf("%d core plugins after restart, want 1", n)
	}
}

func TestNothingOutlivesKilledHosts(t *testing.T) {
	e := newEnv(t)
	a, b := e.startHost(nil), e.startHost([]string{"--profile", "full"})
	a.ok("memory_store", map[string]any{"format": "json", "title": "t", "content": "c"})
	b.ok("test_echo", map[string]any{})
	pluginPids := append(append(childrenOf(a.pid(), "ai-memory-"), childrenOf(b.pid(), "ai-memory-")...), childrenOf(b.pid(), "testplugin")...)
	if len(pluginPids) < 3 {
		t.Fatalf("expected core plugins of both hosts and the test plugin, got %v", pluginPids)
	}
	a.kill9()
	b.kill9()
	eventually(t, 5*time.Second, "plugins to exit after their hosts were killed", func() bool {
		for _, pid := range pluginPids {
			if alive(pid) {
				return false
			}
		}
		return true
	})
	// The engine idles out (AI_MEMORY_ENGINE_IDLE_TIMEOUT=3s in tests).
	eventually(t, 15*time.Second, "engine to exit after its idle period", func() bool { return len(e.enginePids()) == 0 })
	if _, err := os.Stat(filepath.Join(e.dataDir, "engine.sock")); err == nil {
		t.Error("engine left its socket behind")
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !isZombie(st)
}

func TestChangedPluginBinaryIsRefused(t *testing.T) {
	e := newEnv(t)
	// A private copy of the installation whose core plugin is changed after the manifest was written.
	e.binDir = t.TempDir()
	for _, f := range []string{"ai-memory", "ai-memory-core", "plugins.sha256"} {
		data, err := os.ReadFile(filepath.Join(bins, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(e.binDir, f), data, 0o755)
	}
	// Warm the description cache with the genuine binary first.
	e.startHost(nil).ok("memory_list", map[string]any{"format": "json"})
	// Replace the binary (as an update or an attacker would) with a changed copy.
	genuine, err := os.ReadFile(filepath.Join(e.binDir, "ai-memory-core"))
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(e.binDir, "changed")
	os.WriteFile(changed, append(genuine, "tampered"...), 0o755)
	if err := os.Rename(changed, filepath.Join(e.binDir, "ai-memory-core")); err != nil {
		t.Fatal(err)
	}

	h := e.startHost(nil)
	h.fails("memory_list", map[string]any{}, "SHA-256")
	if !contains(h.stderr.String(), "make build") {
		t.Errorf("host stderr does not explain the refusal: %s", h.stderr.String())
	}
}
