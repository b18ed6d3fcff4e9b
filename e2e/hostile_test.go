package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/supervisor/sandbox"
	"github.com/ai-memory/ai-memory/sdk"
)

var hostile struct {
	once      sync.Once
	path, sum string
	err       error
}

// hostilePlugin builds e2e/hostileplugin once per run.
func hostilePlugin(t *testing.T) (path, sum string) {
	t.Helper()
	hostile.once.Do(func() {
		hostile.path = filepath.Join(binTmp, "hostileplugin")
		if hostile.err = goBuild(hostile.path, "./e2e/hostileplugin"); hostile.err == nil {
			hostile.sum, hostile.err = sha256File(hostile.path)
		}
	})
	if hostile.err != nil {
		t.Fatalf("build the hostile plugin: %v", hostile.err)
	}
	return hostile.path, hostile.sum
}

// A pinned plugin that tries everything it must not: one process serving
// two principals of `ai-memory serve`, on bbolt and on a PostgreSQL that
// wants a password. Every attempt fails, and what reaches the engine is
// refused. Where the kernel offers Landlock (CI's must) the plugin is
// confined: no data dir, config or other program.
func TestHostilePlugin(t *testing.T) {
	confined := sandbox.ABI() > 0
	if !confined && os.Getenv("CI") != "" {
		t.Fatal("CI's kernel must offer Landlock: without it plugins run unconfined")
	}
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) { hostileRun(t, backend, confined) })
	}
}

func hostileRun(t *testing.T, backend string, confined bool) {
	const modelKey, secret = "sk-hostile-model-key-0123456789", "hostile-secret-value"
	e := newEnv(t)
	e.storage, e.dsn = "", ""
	path, sum := hostilePlugin(t)
	e.pins = map[string]string{path: sum}
	var dsn, password string
	if backend == "postgres" {
		dsn = pgtest.NewPasswordCluster(t).DSN(t)
		e.usePostgresEnv(dsn) // the password is in the host's environment only
		i := strings.Index(dsn, "password=")
		password = strings.Fields(dsn[i+len("password="):])[0]
	}
	e.extra = append(e.extra, "OPENAI_API_KEY="+modelKey, "ANTHROPIC_API_KEY="+modelKey,
		"AI_MEMORY_HOSTILE_SECRET="+secret, "AI_MEMORY_HOSTILE_PASSED=passed-on")
	e.writeConfig("[plugin_sandbox]\nenv = [\"AI_MEMORY_HOSTILE_PASSED\"]\n")
	aliceKey := e.token("alice", "--namespace", "team-a")
	bobKey := e.token("bob", "--namespace", "team-b")
	s := e.serve("--profile", "core,hostile")
	alice, bob := s.connect(aliceKey, nil), s.connect(bobKey, nil)
	alice.ok("memory_store", map[string]any{"title": "alice plan", "content": "the zebra migration", "namespace": "team-a"})

	// What a plugin could read: every file of the data dir, the config,
	// and the host's environment through /proc.
	files := []string{e.config, filepath.Dir(e.config), e.dataDir, "/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/environ"}
	filepath.WalkDir(e.dataDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if backend == "bbolt" && !hasName(files, filepath.Join(e.dataDir, "memory.db")) {
		t.Fatalf("no bbolt file among %v", files)
	}
	programs := []string{"/bin/sh", "/usr/bin/env", filepath.Join(e.binDir, "ai-memory")}
	noPassword, _ := pgstore.WithoutPassword(dsn)
	probe := alice.ok("hostile_probe", map[string]any{"files": files, "programs": programs, "pg": noPassword})
	raw, _ := json.Marshal(probe)
	t.Logf("what the plugin saw: %s", raw)

	t.Run("environment", func(t *testing.T) {
		allowed := map[string]bool{sdk.EngineSocketEnv: true, "TMPDIR": true, "PATH": true, "HOME": true, "AI_MEMORY_HOSTILE_PASSED": true,
			sdk.Handshake.MagicCookieKey: true, "PLUGIN_MIN_PORT": true, "PLUGIN_MAX_PORT": true, "PLUGIN_PROTOCOL_VERSIONS": true}
		var names []string
		for _, kv := range probe["env"].([]any) {
			kv := kv.(string)
			name, value, _ := strings.Cut(kv, "=")
			names = append(names, name)
			if !allowed[name] {
				t.Errorf("the plugin got %s", name)
			}
			for _, s := range []string{modelKey, secret, dsn} {
				if s != "" && strings.Contains(value, s) {
					t.Errorf("the plugin's %s holds a secret of the host's", name)
				}
			}
			if password != "" && strings.Contains(value, password) {
				t.Errorf("the plugin's %s holds the database password", name)
			}
		}
		if !hasName(names, "AI_MEMORY_HOSTILE_PASSED") || !hasName(names, sdk.EngineSocketEnv) {
			t.Errorf("the plugin lacks what it should have: %v", names)
		}
	})

	t.Run("engine", func(t *testing.T) {
		if probe["own_call"] != "OK" {
			t.Errorf("the call's own engine call: %v", probe["own_call"])
		}
		for what, got := range probe["host_only"].(map[string]any) {
			if !strings.HasPrefix(got.(string), "PermissionDenied") {
				t.Errorf("%s with a plugin's assertion: %v, want PermissionDenied", what, got)
			}
		}
	})

	if backend == "postgres" {
		t.Run("postgres", func(t *testing.T) {
			if got := probe["pg"].(string); !strings.Contains(got, "password") {
				t.Errorf("connecting without the password: %s", got)
			}
		})
	}

	// The assertions the plugin kept are dead once their calls ended:
	// replayed while serving bob, and while serving alice again.
	t.Run("replay", func(t *testing.T) {
		for _, who := range []*host{bob, alice} {
			r := who.ok("hostile_replay", map[string]any{"namespace": "team-a"})
			if r["own_call"] != "OK" || r["pid"] != probe["pid"] {
				t.Errorf("replay call: own engine call %v, pid %v (the probe's %v)", r["own_call"], r["pid"], probe["pid"])
			}
			replays := r["replays"].([]any)
			if len(replays) == 0 {
				t.Fatalf("no assertion was kept: %v", r)
			}
			for _, a := range replays {
				a := a.(map[string]any)
				for _, op := range []string{"list", "store", "new_watch"} {
					if got := a[op].(string); !strings.HasPrefix(got, "Unauthenticated") || !strings.Contains(got, "has ended") {
						t.Errorf("%s's kept assertion, %s while serving %s: %s", a["principal"], op, r["principal"], got)
					}
				}
				if got := a["kept_watch"].(string); !strings.HasPrefix(got, "ENDED") {
					t.Errorf("%s's event watch after its call: %s", a["principal"], got)
				}
			}
		}
		if text, _ := alice.call("memory_list", map[string]any{"namespace": "team-a"}); strings.Contains(text, "replayed") || !strings.Contains(text, "alice plan") {
			t.Errorf("team-a after the replays: %s", text)
		}
	})

	t.Run("confined", func(t *testing.T) {
		if !confined {
			t.Skip("this kernel offers no Landlock: the plugin could read and run what its user can (docs/plugins.md)")
		}
		for f, got := range probe["files"].(map[string]any) {
			if !strings.Contains(got.(string), "permission denied") {
				t.Errorf("reading %s: %v, want permission denied", f, got)
			}
		}
		for p, got := range probe["programs"].(map[string]any) {
			if !strings.Contains(got.(string), "permission denied") {
				t.Errorf("running %s: %v, want permission denied", p, got)
			}
		}
		out, _ := e.cli("doctor", "--json")
		var report struct {
			Checks []struct{ Name, Status, Detail string }
		}
		if err := json.Unmarshal([]byte(out), &report); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		found := false
		for _, c := range report.Checks {
			if c.Name == "confinement" {
				found = true
				if c.Status != "active" || !strings.Contains(c.Detail, "Landlock ABI") {
					t.Errorf("doctor: %+v", c)
				}
			}
		}
		if !found {
			t.Errorf("doctor reports no confinement line: %s", out)
		}
	})
}

// A DSN password written in config.toml is not copied into the data dir's
// engine.toml: the engine gets it from the host's environment, and the
// host says so.
func TestDSNPasswordStaysOutOfTheDataDir(t *testing.T) {
	e := newEnv(t)
	dsn := pgtest.NewPasswordCluster(t).DSN(t)
	e.usePostgres(dsn) // [storage] dsn, password and all
	h := e.startHost(nil)
	stored := h.ok("memory_store", map[string]any{"title": "kiwi", "content": "stored through a DSN from config.toml"})
	h.ok("memory_get", map[string]any{"id": stored["id"]})

	recorded, err := os.ReadFile(filepath.Join(e.dataDir, "engine.toml"))
	if err != nil {
		t.Fatal(err)
	}
	stripped, had := pgstore.WithoutPassword(dsn)
	if !had || strings.Contains(string(recorded), "password") || !strings.Contains(string(recorded), stripped) {
		t.Errorf("engine.toml:\n%s\nwant the DSN without its password (%s)", recorded, stripped)
	}
	if !strings.Contains(h.stderr.String(), "[storage] dsn holds a password") {
		t.Errorf("the host did not say where the password went:\n%s", h.stderr.String())
	}
}
