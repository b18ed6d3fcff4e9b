package install

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const testBinary = "/opt/ai-memory/bin/ai-memory"

// existing is each harness's "config the user already has": other
// servers, other settings and, where the format allows, comments.
var existing = map[string]string{
	"claude-code":    "strict.json",
	"claude-desktop": "strict.json",
	"codex":          "codex.toml",
	"gemini-cli":     "gemini.json",
	"cursor":         "strict.json",
	"windsurf":       "strict.json",
	"cline":          "strict.json",
	"vscode":         "vscode.json",
	"zed":            "zed.json",
	"grok":           "grok.toml",
	"grok-cli":       "grok.json",
}

func testOptions(t *testing.T, harness string) Options {
	home := t.TempDir()
	o := Options{
		Harness: harness, Binary: testBinary, Home: home, GOOS: "linux",
		Getenv: func(string) string { return "" },
	}
	if harness == "grok-cli" {
		o.Project, o.ProjectDir = true, filepath.Join(home, "project")
	}
	return o
}

func plan(t *testing.T, o Options) *Plan {
	t.Helper()
	p, err := Make(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func apply(t *testing.T, p *Plan) string {
	t.Helper()
	b, err := p.Apply(time.Date(2026, 12, 1, 14, 0, 0, 123e6, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/install -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestFreshInstallIdempotentAndUninstallLeavesNothing(t *testing.T) {
	for _, h := range Harnesses {
		t.Run(h.Name, func(t *testing.T) {
			o := testOptions(t, h.Name)
			p := plan(t, o)
			if p.Existed || !p.Changed() {
				t.Fatalf("fresh plan: existed=%v changed=%v", p.Existed, p.Changed())
			}
			golden(t, h.Name+".fresh", p.After)
			if backup := apply(t, p); backup != "" {
				t.Errorf("backup %s of a file that did not exist", backup)
			}
			if again := plan(t, o); again.Changed() {
				t.Errorf("re-install changes the file:\n%s", again.Diff())
			}
			l, err := ReadLaunch(h.Name, p.Path, DefaultName)
			if err != nil {
				t.Fatal(err)
			}
			if l.Command != testBinary || len(l.Args) != 3 || l.Args[0] != "mcp" || l.Args[1] != "--profile" || l.Args[2] != h.Profile {
				t.Errorf("launch read back = %+v", l)
			}
			o.Uninstall = true
			u := plan(t, o)
			if !u.Found || !u.Delete {
				t.Fatalf("uninstall of a fresh install: found=%v delete=%v after=%q", u.Found, u.Delete, u.After)
			}
			apply(t, u)
			if _, err := os.Stat(p.Path); !os.IsNotExist(err) {
				t.Errorf("uninstall left %s: %v", p.Path, err)
			}
		})
	}
}

func TestInstallIntoExistingConfigKeepsEverythingElse(t *testing.T) {
	for _, h := range Harnesses {
		in, ok := existing[h.Name]
		if !ok {
			continue
		}
		t.Run(h.Name, func(t *testing.T) {
			o := testOptions(t, h.Name)
			original, err := os.ReadFile(filepath.Join("testdata", "in", in))
			if err != nil {
				t.Fatal(err)
			}
			p0 := plan(t, o)
			if err := os.MkdirAll(filepath.Dir(p0.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p0.Path, original, 0o600); err != nil {
				t.Fatal(err)
			}
			p := plan(t, o)
			golden(t, h.Name+".existing", p.After)
			backup := apply(t, p)
			if b, err := os.ReadFile(backup); err != nil || !bytes.Equal(b, original) {
				t.Errorf("backup %s: %v, equal=%v", backup, err, bytes.Equal(b, original))
			}
			if filepath.Base(backup) != filepath.Base(p.Path)+".bak.20261201T140000.123Z" {
				t.Errorf("backup name %s", backup)
			}
			if st, _ := os.Stat(p.Path); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the file's 0600 kept", st.Mode().Perm())
			}
			if again := plan(t, o); again.Changed() {
				t.Errorf("re-install changes the file:\n%s", again.Diff())
			}
			o.Uninstall = true
			u := plan(t, o)
			if !u.Found || u.Delete {
				t.Fatalf("uninstall: found=%v delete=%v", u.Found, u.Delete)
			}
			if !bytes.Equal(u.After, original) {
				t.Errorf("uninstall does not restore the original:\n%s", u.Diff())
			}
			apply(t, u)
			if again := plan(t, o); again.Found || again.Changed() {
				t.Errorf("second uninstall: found=%v changed=%v", again.Found, again.Changed())
			}
		})
	}
}

func TestContinueBlockFileLeavesTheUsersFilesAlone(t *testing.T) {
	o := testOptions(t, "continue")
	cfg := filepath.Join(o.Home, ".continue", "config.yaml")
	other := filepath.Join(o.Home, ".continue", "mcpServers", "playwright.yaml")
	files := map[string]string{
		cfg:   "name: my-config\nversion: 0.0.1\nschema: v1\n# my models\nmodels: []\n",
		other: "name: Playwright\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: Browser search\n    command: npx\n    args: [\"@playwright/mcp@latest\"]\n",
	}
	for f, s := range files {
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte(s), 0o644)
	}
	apply(t, plan(t, o))
	o.Uninstall = true
	apply(t, plan(t, o))
	for f, s := range files {
		if b, _ := os.ReadFile(f); string(b) != s {
			t.Errorf("%s changed: %q", f, b)
		}
	}
	// A block file we did not write is refused, not replaced.
	o.Uninstall = false
	p := plan(t, o)
	os.WriteFile(p.Path, []byte("name: mine\n"), 0o644)
	if _, err := Make(o); err == nil {
		t.Error("install over a foreign ai-memory.yaml: no error")
	}
}

func TestRemoteForms(t *testing.T) {
	for _, h := range Harnesses {
		t.Run(h.Name, func(t *testing.T) {
			o := testOptions(t, h.Name)
			o.Remote = &Remote{URL: "https://memory.example.com/mcp", TokenEnv: "AI_MEMORY_TOKEN"}
			p, err := Make(o)
			if ok, why := h.HasRemote(); !ok {
				if err == nil || why == "" {
					t.Fatalf("no remote form, but err=%v why=%q", err, why)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, h.Name+".remote", p.After)
			apply(t, p)
			if again := plan(t, o); again.Changed() {
				t.Errorf("re-install changes the file:\n%s", again.Diff())
			}
			o.Uninstall = true
			if u := plan(t, o); !u.Found || !u.Delete {
				t.Errorf("uninstall of the remote entry: found=%v delete=%v", u.Found, u.Delete)
			}
		})
	}
}

func TestForeignEntryIsRefused(t *testing.T) {
	o := testOptions(t, "cursor")
	p := plan(t, o)
	os.MkdirAll(filepath.Dir(p.Path), 0o755)
	os.WriteFile(p.Path, []byte(`{"mcpServers": {"ai-memory": {"command": "node", "args": ["server.js"]}}}`), 0o644)
	if _, err := Make(o); err == nil {
		t.Fatal("install over another program's ai-memory entry: no error")
	}
	o.Uninstall = true
	if _, err := Make(o); err == nil {
		t.Fatal("uninstall of another program's ai-memory entry: no error")
	}
}

func TestBadConfigIsRefused(t *testing.T) {
	for harness, body := range map[string]string{
		"cursor": "[1, 2]",
		"vscode": `{"servers": 3}`,
		"codex":  "mcp_servers = { other = { command = \"x\" } }\n",
		"zed":    "{ not json",
	} {
		o := testOptions(t, harness)
		p := plan(t, o)
		os.MkdirAll(filepath.Dir(p.Path), 0o755)
		os.WriteFile(p.Path, []byte(body), 0o644)
		if _, err := Make(o); err == nil {
			t.Errorf("%s: %q accepted", harness, body)
		}
	}
}

func TestProjectScope(t *testing.T) {
	for _, h := range Harnesses {
		o := testOptions(t, h.Name)
		o.Project, o.ProjectDir = true, filepath.Join(o.Home, "proj")
		p, err := Make(o)
		if !h.HasProject() {
			if err == nil {
				t.Errorf("%s: --project accepted without a project config", h.Name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if rel, _ := filepath.Rel(o.ProjectDir, p.Path); rel != h.project {
			t.Errorf("%s: project path %s", h.Name, p.Path)
		}
	}
}

// BenchmarkInstallApply: plan and apply into an existing config (JSONC and
// TOML), then uninstall, as `install --apply` does.
func BenchmarkInstallApply(b *testing.B) {
	for _, h := range []string{"vscode", "codex"} {
		b.Run(h, func(b *testing.B) {
			home := b.TempDir()
			o := Options{Harness: h, Binary: testBinary, Home: home, GOOS: "linux", Getenv: func(string) string { return "" }}
			p, _ := Make(o)
			original, _ := os.ReadFile(filepath.Join("testdata", "in", existing[h]))
			os.MkdirAll(filepath.Dir(p.Path), 0o755)
			os.WriteFile(p.Path, original, 0o644)
			now := time.Now()
			for b.Loop() {
				o.Uninstall = false
				p, err := Make(o)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Apply(now); err != nil {
					b.Fatal(err)
				}
				o.Uninstall = true
				u, _ := Make(o)
				if _, err := u.Apply(now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// executable makes an empty executable file at path.
func executable(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A project config travels: it names the command as typed when PATH finds
// this very binary, and says so whenever it holds a path of this machine.
func TestProjectConfigNamesTheCommandOnPath(t *testing.T) {
	home := t.TempDir()
	self := executable(t, filepath.Join(home, "opt", "bin", "ai-memory"))
	other := executable(t, filepath.Join(home, "elsewhere", "ai-memory"))
	link := filepath.Join(home, "bin", "ai-memory")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, binary, onPath, want, note string
	}{
		{"this binary on PATH, through a link", "", link, "ai-memory", ""},
		{"not on PATH", "", "", self, "ai-memory is not on PATH"},
		{"another ai-memory on PATH", "", other, self, "is another binary (" + other + ")"},
		{"--binary a path", self, link, self, "--binary gave a path"},
		{"--binary a name", "ai-memory", link, "ai-memory", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Harness: "claude-code", Project: true, ProjectDir: filepath.Join(home, "proj"), Binary: tc.binary, Self: self,
				Home: home, GOOS: "linux", Getenv: func(string) string { return "" },
				LookPath: func(b string) string {
					if b == "ai-memory" {
						return tc.onPath
					}
					return ""
				}}
			p := plan(t, o)
			apply(t, p)
			l, err := ReadLaunch("claude-code", p.Path, DefaultName)
			if err != nil || l.Command != tc.want {
				t.Fatalf("command %q (%v), want %q", l.Command, err, tc.want)
			}
			notes := strings.Join(p.Notes, "\n")
			if tc.note == "" && notes != "" || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
			if tc.want != "ai-memory" && !strings.Contains(notes, "a path on this machine") {
				t.Errorf("a machine path written without saying so: %q", notes)
			}
		})
	}
	// A user config keeps the absolute path (GUI harnesses do not start
	// servers with the shell's PATH), and says nothing.
	o := Options{Harness: "cursor", Self: self, Home: home, GOOS: "linux", Getenv: func(string) string { return "" },
		LookPath: func(string) string { return link }}
	if p := plan(t, o); !bytes.Contains(p.After, []byte(self)) || len(p.Notes) != 0 {
		t.Errorf("user config: notes %q\n%s", p.Notes, p.After)
	}
}

// A binary that is not there is written (the user may build it next) but warned about.
func TestMissingBinaryWarns(t *testing.T) {
	for binary, want := range map[string]string{
		"/no/such/dir/ai-memory": "/no/such/dir/ai-memory does not exist",
		"ai-memory-nope":         "ai-memory-nope is not on PATH here",
	} {
		o := testOptions(t, "codex")
		o.Binary = binary
		p := plan(t, o)
		if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, want) || !strings.HasPrefix(notes, "warning: ") {
			t.Errorf("--binary %s: notes %q, want %q", binary, notes, want)
		}
		if !bytes.Contains(p.After, []byte(binary)) {
			t.Errorf("--binary %s became:\n%s", binary, p.After)
		}
	}
}

// Every apply keeps one backup of the file: install's earlier ones go,
// and nothing else does.
func TestOneBackupPerFile(t *testing.T) {
	o := testOptions(t, "cursor")
	p := plan(t, o)
	os.MkdirAll(filepath.Dir(p.Path), 0o755)
	os.WriteFile(p.Path, []byte(`{"mcpServers": {}}`), 0o644)
	mine := []string{p.Path + ".bak", p.Path + ".bak.mine", p.Path + ".bak.20261201T140000.123Z.old"}
	for _, f := range mine {
		os.WriteFile(f, []byte("the user's"), 0o644)
	}
	at := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	for i := range 6 {
		o.Uninstall = i%2 == 1
		p, err := Make(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Apply(at.Add(time.Duration(i) * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	backups, _ := filepath.Glob(p.Path + ".bak*")
	want := append(mine, p.Path+".bak.20261201T140005.000Z")
	if strings.Join(backups, " ") != strings.Join(sorted(want), " ") {
		t.Errorf("backups after three install/uninstall rounds:\n%s\nwant\n%s", strings.Join(backups, "\n"), strings.Join(sorted(want), "\n"))
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// xAI's Grok and the community grok-cli both install a `grok` and a
// ~/.grok: each is detected by what is its own.
func TestGrokTargetsAreDetectedApart(t *testing.T) {
	detected := func(files []string, grokBin string) string {
		home := t.TempDir()
		for _, f := range files {
			executable(t, filepath.Join(home, f))
		}
		o := Options{Home: home, GOOS: "linux", Getenv: func(string) string { return "" },
			LookPath: func(b string) string {
				if b == "grok" {
					return grokBin
				}
				return ""
			}}
		var names []string
		for _, n := range []string{"grok", "grok-cli"} {
			if h, _ := Lookup(n); h.Detected(&o) {
				names = append(names, n)
			}
		}
		return strings.Join(names, ",")
	}
	for _, tc := range []struct {
		files   []string
		grokBin string
		want    string
	}{
		{[]string{".grok/config.toml"}, "", "grok"},
		{[]string{".grok/bin/grok"}, "", "grok"},
		{nil, "/home/u/.grok/bin/grok", "grok"},
		{[]string{".grok/user-settings.json"}, "", "grok-cli"},
		{nil, "/usr/lib/node_modules/@vibe-kit/grok-cli/dist/index.js", "grok-cli"},
		{[]string{".grok/config.toml", ".grok/user-settings.json"}, "", "grok,grok-cli"},
		{[]string{".grok/sessions/x"}, "", ""}, // a ~/.grok alone says neither
	} {
		if got := detected(tc.files, tc.grokBin); got != tc.want {
			t.Errorf("files %v, grok at %q: detected %q, want %q", tc.files, tc.grokBin, got, tc.want)
		}
	}
}

// Each Grok target writes its own file in its own format.
func TestGrokTargetsWriteTheirOwnFormats(t *testing.T) {
	o := testOptions(t, "grok")
	p := plan(t, o)
	if p.Path != filepath.Join(o.Home, ".grok", "config.toml") || !bytes.Contains(p.After, []byte("[mcp_servers.ai-memory]\ncommand = \""+testBinary+"\"")) {
		t.Errorf("grok: %s\n%s", p.Path, p.After)
	}
	o.Getenv = func(k string) string {
		if k == "GROK_HOME" {
			return "/srv/grok"
		}
		return ""
	}
	if p := plan(t, o); p.Path != "/srv/grok/config.toml" {
		t.Errorf("grok with GROK_HOME: %s", p.Path)
	}
	o = testOptions(t, "grok")
	o.Project, o.ProjectDir = true, filepath.Join(o.Home, "proj")
	if p := plan(t, o); p.Path != filepath.Join(o.ProjectDir, ".grok", "config.toml") {
		t.Errorf("grok --project: %s", p.Path)
	}
	c := testOptions(t, "grok-cli")
	if p := plan(t, c); p.Path != filepath.Join(c.ProjectDir, ".grok", "settings.json") || !bytes.Contains(p.After, []byte(`"transport": {`)) {
		t.Errorf("grok-cli: %s\n%s", p.Path, p.After)
	}
	c.Project = false
	if _, err := Make(c); err == nil || !strings.Contains(err.Error(), "use --project") {
		t.Errorf("grok-cli without --project: %v", err)
	}
}

// alwaysLoad is written for core only: a larger profile keeps Claude Code's
// tool search deferring the tools it does not mark always-load itself.
func TestClaudeCodeAlwaysLoadOnlyOnCore(t *testing.T) {
	for profile, want := range map[string]bool{"core": true, "full": false, "core,graph": false} {
		o := testOptions(t, "claude-code")
		o.Profile = profile
		p := plan(t, o)
		if got := bytes.Contains(p.After, []byte(`"alwaysLoad": true`)); got != want {
			t.Errorf("profile %s: alwaysLoad written = %v, want %v\n%s", profile, got, want, p.After)
		}
	}
}
