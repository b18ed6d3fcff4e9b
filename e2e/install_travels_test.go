package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/install"
)

// installRun runs the real binary with HOME and PATH only, in dir, and
// returns its combined output (stderr carries the notes).
func installRun(t *testing.T, home, path, dir string, args ...string) string {
	t.Helper()
	cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + path}
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestProjectConfigIsPortable: with ai-memory on PATH, a project config
// names the command, not this machine's path, and a harness with that
// PATH starts it; without it, the path is written and the user told.
func TestProjectConfigIsPortable(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	linkDir := filepath.Join(home, "bin")
	os.MkdirAll(proj, 0o755)
	os.MkdirAll(linkDir, 0o755)
	if err := os.Symlink(filepath.Join(bins, "ai-memory"), filepath.Join(linkDir, "ai-memory")); err != nil {
		t.Fatal(err)
	}
	withLink := linkDir + ":" + os.Getenv("PATH")
	mcpJSON := filepath.Join(proj, ".mcp.json")

	out := installRun(t, home, withLink, proj, "install", "claude-code", "--project", "--apply")
	l, err := install.ReadLaunch("claude-code", mcpJSON, install.DefaultName)
	if err != nil || l.Command != "ai-memory" || strings.Contains(out, "note:") || strings.Contains(out, "warning:") {
		t.Fatalf("with ai-memory on PATH: command %q (%v)\n%s", l.Command, err, out)
	}
	b, _ := os.ReadFile(mcpJSON)
	if strings.Contains(string(b), home) || strings.Contains(string(b), bins) {
		t.Fatalf(".mcp.json holds a machine path:\n%s", b)
	}
	// A harness opened in the project with the user's PATH starts it.
	e := newEnv(t) // its data dir, and the engine the entry starts there, are cleaned up with it
	c, err := client.NewStdioMCPClientWithOptions(l.Command, []string{"HOME=" + home, "PATH=" + withLink,
		"AI_MEMORY_DATA_DIR=" + e.dataDir, "AI_MEMORY_ENGINE_IDLE_TIMEOUT=3s"}, l.Args,
		transport.WithCommandStderrWriter(&syncBuffer{}), transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			path, err := lookPathIn(command, withLink)
			if err != nil {
				return nil, err
			}
			cmd := exec.CommandContext(ctx, path, args...)
			cmd.Env, cmd.Dir = env, proj
			return cmd, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: "claude-code", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("the project entry does not start: %v", err)
	}

	// Without ai-memory on PATH the absolute path is written, and said.
	out = installRun(t, home, os.Getenv("PATH"), proj, "install", "vscode", "--project", "--apply")
	l, _ = install.ReadLaunch("vscode", filepath.Join(proj, ".vscode", "mcp.json"), install.DefaultName)
	if l.Command != filepath.Join(bins, "ai-memory") || !strings.Contains(out, "note: this project config names "+l.Command+", a path on this machine: ai-memory is not on PATH") {
		t.Fatalf("without ai-memory on PATH: command %q\n%s", l.Command, out)
	}

	// --binary ai-memory is the command name, wherever install runs.
	os.WriteFile(filepath.Join(proj, "ai-memory"), nil, 0o755)
	out = installRun(t, home, withLink, proj, "install", "cursor", "--project", "--binary", "ai-memory")
	if !strings.Contains(out, `"command": "ai-memory"`) || strings.Contains(out, filepath.Join(proj, "ai-memory")) {
		t.Fatalf("--binary ai-memory:\n%s", out)
	}
}

// lookPathIn is exec.LookPath over the given PATH.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// TestMissingBinaryWarns: install writes what it is told, but says when
// the binary is not there.
func TestMissingBinaryWarns(t *testing.T) {
	home := t.TempDir()
	out := installRun(t, home, os.Getenv("PATH"), home, "install", "codex", "--binary", "/nonexistent/bin/ai-memory")
	if !strings.Contains(out, "codex: warning: /nonexistent/bin/ai-memory does not exist: the harness will fail to start it") ||
		!strings.Contains(out, `command = "/nonexistent/bin/ai-memory"`) {
		t.Fatalf("missing binary:\n%s", out)
	}
	out = installRun(t, home, "/nonexistent", home, "install", "codex", "--binary", "ai-memory")
	if !strings.Contains(out, "codex: warning: ai-memory is not on PATH here") {
		t.Fatalf("a command name not on PATH:\n%s", out)
	}
}

// TestBothGrokTargets: xAI's Grok (~/.grok/config.toml, TOML) and the
// community grok-cli (project .grok/settings.json, JSON) are detected by
// what is their own and get their own format.
func TestBothGrokTargets(t *testing.T) {
	const xaiConfig = "[model]\ndefault = \"grok-code-fast-1\"\n"
	xai := t.TempDir()
	os.MkdirAll(filepath.Join(xai, ".grok"), 0o755)
	os.WriteFile(filepath.Join(xai, ".grok", "config.toml"), []byte(xaiConfig), 0o600)
	if out := installRun(t, xai, "/nonexistent", xai, "init"); !strings.Contains(out, "detected: grok\n") {
		t.Fatalf("init with xAI's Grok:\n%s", out)
	}
	installRun(t, xai, "/nonexistent", xai, "init", "--yes", "--harness", "grok", "--binary", filepath.Join(bins, "ai-memory"))
	b, _ := os.ReadFile(filepath.Join(xai, ".grok", "config.toml"))
	l, err := install.ReadLaunch("grok", filepath.Join(xai, ".grok", "config.toml"), install.DefaultName)
	if !strings.HasPrefix(string(b), xaiConfig) || !strings.Contains(string(b), "[mcp_servers.ai-memory]") || err != nil || l.Args[0] != "mcp" {
		t.Fatalf("~/.grok/config.toml (%v):\n%s", err, b)
	}

	// The community's: its user settings, or a grok that npm linked in.
	community := t.TempDir()
	os.MkdirAll(filepath.Join(community, ".grok"), 0o755)
	os.WriteFile(filepath.Join(community, ".grok", "user-settings.json"), []byte(`{"apiKey": "x"}`), 0o600)
	if out := installRun(t, community, "/nonexistent", community, "init"); !strings.Contains(out, "detected: grok-cli\n") {
		t.Fatalf("init with grok-cli's settings:\n%s", out)
	}
	npm := t.TempDir()
	pkg := filepath.Join(npm, "lib", "node_modules", "@vibe-kit", "grok-cli", "dist", "index.js")
	os.MkdirAll(filepath.Dir(pkg), 0o755)
	os.WriteFile(pkg, []byte("#!/usr/bin/env node\n"), 0o755)
	os.MkdirAll(filepath.Join(npm, "bin"), 0o755)
	os.Symlink(pkg, filepath.Join(npm, "bin", "grok"))
	if out := installRun(t, t.TempDir(), filepath.Join(npm, "bin"), npm, "init"); !strings.Contains(out, "detected: grok-cli\n") {
		t.Fatalf("init with grok-cli from npm on PATH:\n%s", out)
	}
	proj := filepath.Join(community, "proj")
	os.MkdirAll(proj, 0o755)
	installRun(t, community, "/nonexistent", proj, "install", "grok-cli", "--project", "--dir", proj, "--apply", "--binary", filepath.Join(bins, "ai-memory"))
	if l, err := install.ReadLaunch("grok-cli", filepath.Join(proj, ".grok", "settings.json"), install.DefaultName); err != nil || l.Args[0] != "mcp" {
		t.Fatalf(".grok/settings.json: %v %+v", err, l)
	}
	if _, err := os.Stat(filepath.Join(community, ".grok", "config.toml")); !os.IsNotExist(err) {
		t.Errorf("grok-cli's install wrote xAI's config.toml: %v", err)
	}
}

// TestApplyKeepsOneBackup: install and uninstall rounds leave one backup
// of the file, not one per run.
func TestApplyKeepsOneBackup(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"x\"\n"), 0o600)
	for range 3 {
		installRun(t, home, "/nonexistent", home, "install", "codex", "--apply", "--binary", filepath.Join(bins, "ai-memory"))
		installRun(t, home, "/nonexistent", home, "install", "codex", "--apply", "--uninstall")
	}
	backups, _ := filepath.Glob(filepath.Join(home, ".codex", "config.toml.bak*"))
	if len(backups) != 1 {
		t.Fatalf("backups after three rounds: %v", backups)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml")); string(b) != "model = \"x\"\n" {
		t.Fatalf("config.toml after the rounds: %q", b)
	}
}

// TestInitAsksUntilYesOrNo: on a terminal, init asks per harness, asks
// again on an unclear answer, then sums up and says what is next.
func TestInitAsksUntilYesOrNo(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("script(1) is needed for the terminal test")
		}
		t.Skip("script(1) is not installed: the terminal question is not tested")
	}
	home := t.TempDir()
	for _, d := range []string{".codex", ".cursor"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	cmd := command(t, script, "-qec", filepath.Join(bins, "ai-memory")+" init --binary "+filepath.Join(bins, "ai-memory"), "/dev/null")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader("maybe\ny\nn\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("init on a terminal: %v\n%s", err, out)
	}
	for _, want := range []string{"Add ai-memory to Codex CLI", "[Y/n]", "please answer y (yes) or n (no)", "Codex CLI: wrote",
		"added to: Codex CLI", "declined: Cursor", "next: restart Codex CLI"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("init lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor", "mcp.json")); !os.IsNotExist(err) {
		t.Errorf("a declined harness was written: %v", err)
	}
}
