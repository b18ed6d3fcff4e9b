package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/install"
)

// TestInstalledCommandAnswersInitialize installs into every harness on a
// temp HOME with the real binary, reads back the command the harness would
// start, starts it exactly so (command, args, the user's environment,
// nothing from the test harness), and speaks MCP to it.
func TestInstalledCommandAnswersInitialize(t *testing.T) {
	for _, name := range install.Names() {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			home := filepath.Dir(e.dataDir)
			args := []string{"install", name, "--apply", "--binary", filepath.Join(bins, "ai-memory")}
			if name == "grok-cli" {
				args = append(args, "--project", "--dir", filepath.Join(home, "proj"))
			}
			cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			// "<Title>: wrote <path> in <duration>"
			_, rest, _ := strings.Cut(string(out), ": wrote ")
			path, _, _ := strings.Cut(rest, " ")
			l, err := install.ReadLaunch(name, path, install.DefaultName)
			if err != nil {
				t.Fatalf("read back %s: %v\n%s", path, err, out)
			}
			harnessEnv := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
				"AI_MEMORY_DATA_DIR=" + e.dataDir, "AI_MEMORY_ENGINE_IDLE_TIMEOUT=3s"}
			c, err := client.NewStdioMCPClientWithOptions(l.Command, harnessEnv, l.Args,
				transport.WithCommandStderrWriter(&syncBuffer{}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req := mcp.InitializeRequest{}
			req.Params.ProtocolVersion = "2025-06-18"
			req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
			res, err := c.Initialize(ctx, req)
			if err != nil {
				t.Fatalf("initialize %s %v: %v", l.Command, l.Args, err)
			}
			if res.ServerInfo.Name == "" {
				t.Errorf("initialize answered without serverInfo: %+v", res)
			}
			tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "memory_store") || slices.Contains(names, "memory_link") {
				t.Errorf("core profile expected, tools/list = %v", names)
			}
		})
	}
}

// TestInitWithoutATerminal: init detects harnesses from their config dirs,
// shows a dry run when it cannot ask, and installs with --yes.
func TestInitWithoutATerminal(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".codex", ".cursor"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
		cmd.Env = []string{"HOME=" + home, "PATH=/nonexistent"} // no harness binaries to find
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("init")
	if !strings.Contains(out, "detected: codex, cursor") || !strings.Contains(out, "dry run") || !strings.Contains(out, "recall: by keywords\nnext: ai-memory model pull") {
		t.Fatalf("init without a terminal:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "config.toml")); !os.IsNotExist(err) {
		t.Fatalf("dry run wrote config.toml: %v", err)
	}
	out = run("init", "--yes", "--harness", "codex,gemini-cli")
	for _, f := range []string{".codex/config.toml", ".gemini/settings.json"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Errorf("init --yes did not write %s: %v\n%s", f, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor", "mcp.json")); !os.IsNotExist(err) {
		t.Errorf("init --harness codex,gemini-cli wrote cursor's config: %v", err)
	}
	if out := run("init", "--yes", "--harness", "codex"); !strings.Contains(out, "no change") {
		t.Errorf("second init is not a no-op:\n%s", out)
	}
}

// TestInstallSaysHowToRecallByMeaning: without a model install says, in
// one line, how to get one; with one (AI_MEMORY_MODEL_DIR), or with an
// embedding endpoint configured, it does not.
func TestInstallSaysHowToRecallByMeaning(t *testing.T) {
	modelDir, cfgDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(modelDir, "model.safetensors"), []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[models.embeddings]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"nomic-embed-text\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string
		hint bool
	}{{"", true}, {"AI_MEMORY_MODEL_DIR=" + modelDir, false}, {"AI_MEMORY_CONFIG=" + cfg, false}} {
		home := t.TempDir()
		cmd := command(t, filepath.Join(bins, "ai-memory"), "install", "codex")
		cmd.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + home, "PATH=/nonexistent", tc.env}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("install codex %s: %v\n%s", tc.env, err, out)
		}
		if got := strings.Count(string(out), "recall is by keywords: ai-memory model pull downloads all-MiniLM-L6-v2") == 1; got != tc.hint {
			t.Errorf("%q: hint shown = %v, want %v:\n%s", tc.env, got, tc.hint, out)
		}
		if _, err := os.Stat(filepath.Join(home, "ai-memory", "models")); !os.IsNotExist(err) {
			t.Errorf("install created the model cache: %v", err)
		}
	}
}
