package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The engine's settings belong to the data dir: the first host records its
// [ttl]/[storage] there, later hosts with other values are warned and the
// data dir's stay in force, whichever host starts the engine.
func TestEngineSettingsBelongToTheDataDir(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[ttl]\nshort_ttl_secs = 120\n")
	h1 := e.startHost(nil)
	m := h1.ok("memory_store", map[string]any{"format": "json", "title": "short-lived", "content": "x", "tier": "short"})
	got := h1.ok("memory_get", map[string]any{"id": m["id"], "format": "json"})
	if life := lifetime(t, got); life != 120*time.Second {
		t.Fatalf("short memory lives %v, want the configured 120s", life)
	}
	recorded, err := os.ReadFile(filepath.Join(e.dataDir, "engine.toml"))
	if err != nil || !strings.Contains(string(recorded), "short_ttl_secs = 120") {
		t.Fatalf("engine.toml = %q, %v", recorded, err)
	}
	h1.close()
	eventually(t, 20*time.Second, "the engine to exit after its idle timeout", func() bool { return len(e.enginePids()) == 0 })

	// A second host with another value: warned, and the data dir's value holds
	// even when this host is the one that starts the engine again.
	e.writeConfig("[ttl]\nshort_ttl_secs = 999\n")
	h2 := e.startHost(nil)
	m = h2.ok("memory_store", map[string]any{"format": "json", "title": "second", "content": "y", "tier": "short"})
	got = h2.ok("memory_get", map[string]any{"id": m["id"], "format": "json"})
	if life := lifetime(t, got); life != 120*time.Second {
		t.Fatalf("second host's memory lives %v, want the data dir's 120s", life)
	}
	eventually(t, 10*time.Second, "a warning naming the key", func() bool {
		s := h2.stderr.String()
		return strings.Contains(s, "disagrees with this data dir's engine settings") && strings.Contains(s, "ttl.short_ttl_secs")
	})
}

func lifetime(t *testing.T, m map[string]any) time.Duration {
	t.Helper()
	created, err1 := time.Parse(time.RFC3339Nano, m["created_at"].(string))
	expires, err2 := time.Parse(time.RFC3339Nano, m["expires_at"].(string))
	if err1 != nil || err2 != nil {
		t.Fatalf("times in %v: %v %v", m, err1, err2)
	}
	return expires.Sub(created).Round(time.Second)
}

func TestUnknownConfigKeyIsAnError(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ toml, want string }{
		{"[storage]\nbackend = \"mysql\"\n", "[storage] backend: must be one of bbolt"},
		{"[storage]\ndsn = \"host=db\"\n", "[storage] dsn: only for backend = \"postgres\""},
		{"[storag]\nbackend = \"bbolt\"\n", "unknown key storag"},
		{"[mcp]\nprofle = \"graph\"\n", "unknown key mcp.profle"},
	} {
		e.writeConfig(tc.toml)
		cmd := command(t, filepath.Join(e.binDir, "ai-memory"), "mcp")
		cmd.Env = e.environ()
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%q: exit %v, output %q; want exit 2 naming %q", tc.toml, err, out, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dataDir, "engine.sock")); err == nil {
		t.Error("a host with a bad config started an engine")
	}
}
