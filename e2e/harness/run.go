package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Mode is one way to run a harness: which one, its install name, the
// model it is told to use and extra environment.
type Mode struct {
	Name    string
	Harness string // claude, codex or gemini: the executable in BinDir
	Install string // the `ai-memory install` target
	Model   string
	Env     []string
	// HTTP serves ai-memory over Streamable HTTP (`ai-memory serve`, one
	// per run) and installs the remote entry instead of the stdio one.
	HTTP bool
	// Deferred drops alwaysLoad from Claude Code's installed entry and has
	// `claude -p` wait for its servers instead: ai-memory's tools are then
	// deferred by tool search unless the host marks them always-load.
	Deferred bool
}

// Modes are the harness modes the suite runs. Against a loopback provider
// Claude Code's tool search is off unless ENABLE_TOOL_SEARCH=true (as
// against Anthropic's API). Codex is told a model it has no metadata for,
// so it sends ai-memory's schemas in full (with metadata it defers them
// behind its own tool_search).
var Modes = []Mode{
	{Name: "claude", Harness: "claude", Install: "claude-code", Model: "claude-sonnet-4-5"},
	{Name: "claude-ts", Harness: "claude", Install: "claude-code", Model: "claude-sonnet-4-5", Env: []string{"ENABLE_TOOL_SEARCH=true"}},
	{Name: "codex", Harness: "codex", Install: "codex", Model: "gpt-5.1-codex"},
	{Name: "gemini", Harness: "gemini", Install: "gemini-cli", Model: "gemini-2.5-pro"},
	{Name: "claude-http", Harness: "claude", Install: "claude-code", Model: "claude-sonnet-4-5", HTTP: true},
}

// BenchModes are the modes harness-bench adds: Gemini CLI over HTTP too.
var BenchModes = []Mode{
	DeferredMode,
	{Name: "gemini-http", Harness: "gemini", Install: "gemini-cli", Model: "gemini-2.5-pro", HTTP: true},
}

// DeferredMode is Claude Code with tool search and an entry without
// alwaysLoad (harness-bench: the host's own always-load marks at work).
var DeferredMode = Mode{Name: "claude-ts-deferred", Harness: "claude", Install: "claude-code", Model: "claude-sonnet-4-5",
	Env: []string{"ENABLE_TOOL_SEARCH=true", "MCP_CONNECTION_NONBLOCKING=false"}, Deferred: true}

// ModeNamed returns the mode called name.
func ModeNamed(name string) (Mode, bool) {
	for _, m := range append(Modes, BenchModes...) {
		if m.Name == name {
			return m, true
		}
	}
	return Mode{}, false
}

// Setup is where the harnesses and ai-memory are.
type Setup struct {
	Dir      string        // e2e/harness, whose node_modules/.bin holds the pinned harnesses
	AIMemory string        // the ai-memory binary (its plugins beside it)
	Timeout  time.Duration // bound of one harness process (default 3 minutes)
}

// Installed reports whether `npm ci` installed the harnesses.
func (s Setup) Installed() error {
	for _, h := range []string{"claude", "codex", "gemini"} {
		if _, err := os.Stat(filepath.Join(s.Dir, "node_modules", ".bin", h)); err != nil {
			return err
		}
	}
	_, err := exec.LookPath("node")
	return err
}

// Run is one harness process: a prompt (carrying SCRIPT:<key>) answered by
// the mock from Scripts, with ai-memory installed at Profile on DataDir.
type Run struct {
	Mode    Mode
	Profile string
	DataDir string
	Prompt  string
	Scripts map[string][]Step
	Latency time.Duration
}

// Outcome is what a run left: the mock's requests and the process output.
type Outcome struct {
	Requests []Request
	Install  string // what `ai-memory install` printed
	Stdout   string
	Stderr   string
	Elapsed  time.Duration
}

// Do runs the harness once: a fresh HOME (config written by `ai-memory
// install <harness> --apply` over the provider settings), a mock on
// loopback, the process in its own group, killed when the bound runs out.
func (s Setup) Do(ctx context.Context, r Run) (*Outcome, error) {
	home, err := os.MkdirTemp("", "aim-harness")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return nil, err
	}
	mock, err := StartMock(r.Scripts)
	if err != nil {
		return nil, err
	}
	defer mock.Close()
	mock.Latency = r.Latency

	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir(), "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
	var args []string
	switch r.Mode.Harness {
	case "claude":
		env = append(env, "ANTHROPIC_BASE_URL="+mock.URL, "ANTHROPIC_API_KEY=dummy", "DISABLE_AUTOUPDATER=1",
			"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "IS_SANDBOX=1")
		// `claude -p` runs an MCP tool only when allowed (here, all of ai-memory's).
		args = []string{"-p", r.Prompt, "--output-format", "json", "--model", r.Mode.Model, "--allowedTools", "mcp__ai-memory"}
	case "codex":
		codexHome := filepath.Join(home, ".codex")
		env = append(env, "CODEX_HOME="+codexHome, "MOCK_API_KEY=dummy")
		cfg := fmt.Sprintf("model = %q\nmodel_provider = \"mock\"\napproval_policy = \"never\"\nsandbox_mode = \"read-only\"\n\n"+
			"[model_providers.mock]\nname = \"mock\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n", r.Mode.Model, mock.URL+"/v1")
		if err := writeFile(filepath.Join(codexHome, "config.toml"), cfg); err != nil {
			return nil, err
		}
		args = []string{"exec", "--skip-git-repo-check", "--json", r.Prompt}
	case "gemini":
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+mock.URL, "GEMINI_API_KEY=dummy")
		settings := `{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},` +
			` "privacy": {"usageStatisticsEnabled": false}, "general": {"disableAutoUpdate": true}}`
		if err := writeFile(filepath.Join(home, ".gemini", "settings.json"), settings); err != nil {
			return nil, err
		}
		// `gemini -p` offers MCP tools only with --yolo (or a trusted server).
		args = []string{"-p", r.Prompt, "--output-format", "json", "--yolo", "--model", r.Mode.Model}
	default:
		return nil, fmt.Errorf("unknown harness %q", r.Mode.Harness)
	}
	env = append(env, r.Mode.Env...)

	out := &Outcome{}
	install := []string{"--data-dir", r.DataDir, "install", r.Mode.Install, "--apply", "--profile", r.Profile}
	if r.Mode.HTTP {
		url, stop, err := s.serve(ctx, r, env)
		if err != nil {
			return out, err
		}
		defer stop()
		install = append(install, "--url", url)
	}
	inst := exec.CommandContext(ctx, s.AIMemory, install...)
	inst.Env, inst.Dir = env, proj
	b, err := inst.CombinedOutput()
	out.Install = string(b)
	if err != nil {
		return out, fmt.Errorf("ai-memory install %s: %v\n%s", r.Mode.Install, err, b)
	}
	if r.Mode.Deferred {
		if err := dropAlwaysLoad(filepath.Join(home, ".claude.json")); err != nil {
			return out, err
		}
	}

	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command(filepath.Join(s.Dir, "node_modules", ".bin", r.Mode.Harness), args...)
	cmd.Env, cmd.Dir = env, proj
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{w: &stdout}, &limited{w: &stderr}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return out, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	// The harness and whatever it started (ai-memory among them) go together.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		<-done
	}
	out.Elapsed = time.Since(start)
	out.Requests = mock.Requests()
	out.Stdout, out.Stderr = stdout.String(), stderr.String()
	if err != nil {
		return out, fmt.Errorf("%s: %v after %s\nstderr: %s", r.Mode.Name, err, out.Elapsed.Round(time.Millisecond), tail(out.Stderr, 2000))
	}
	return out, nil
}

// serve starts `ai-memory serve` on a loopback port of its choosing and
// returns its MCP URL, read from its ready line.
func (s Setup) serve(ctx context.Context, r Run, env []string) (string, func(), error) {
	cmd := exec.Command(s.AIMemory, "--data-dir", r.DataDir, "serve", "--auth", "none", "--listen", "127.0.0.1:0", "--profile", r.Profile)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), "ai-memory serve ready\" url="); ok {
				ready <- strings.Fields(after)[0]
			}
		}
		close(ready)
	}()
	select {
	case url, ok := <-ready:
		if ok {
			return url, stop, nil
		}
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	stop()
	return "", nil, fmt.Errorf("ai-memory serve did not say it was ready")
}

func dropAlwaysLoad(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	delete(obj(obj(cfg["mcpServers"])["ai-memory"]), "alwaysLoad")
	b, _ = json.Marshal(cfg)
	return os.WriteFile(path, b, 0o600)
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

// limited keeps the first 4 MiB a process writes.
type limited struct{ w *bytes.Buffer }

func (l *limited) Write(p []byte) (int, error) {
	if room := 4<<20 - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}
