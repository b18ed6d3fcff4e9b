// Package e2e drives the real binaries over stdio as an agent harness does:
// real host, engine and plugin processes, a real bbolt file, real sockets.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/testwait"
)

// bins is the directory with ai-memory, its plugins and their manifest.
var bins string

// testPlugin is the third-party-style plugin binary and its SHA-256.
var testPlugin, testPluginSum string

// binTmp holds the test plugins' binaries.
var binTmp string

func TestMain(m *testing.M) {
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	// The processes tests start run outside any git work tree, as from a
	// harness opened outside a project: memories default to global.
	if err := os.Chdir(binTmp); err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	if code == 0 {
		code = m.Run()
	}
	pgtest.StopShared() // the PostgreSQL cluster, if a test started one
	os.Exit(code)
}

// setup uses the binaries `make build` made (AI_MEMORY_TEST_BIN), else
// builds them, so `go test ./...` works alone too.
func setup() (int, error) {
	tmp, err := os.MkdirTemp("", "aim-e2e-bin")
	if err != nil {
		return 1, err
	}
	bins = os.Getenv("AI_MEMORY_TEST_BIN")
	if bins == "" {
		bins = filepath.Join(tmp, "bin")
		if err := goBuild(filepath.Join(bins, "ai-memory"), "./cmd/ai-memory"); err != nil {
			return 1, err
		}
		var manifest strings.Builder
		for _, p := range []string{"core", "graph", "admin", "power", "archive"} {
			name := "ai-memory-" + p
			if err := goBuild(filepath.Join(bins, name), "./plugins/"+p); err != nil {
				return 1, err
			}
			sum, err := sha256File(filepath.Join(bins, name))
			if err != nil {
				return 1, err
			}
			manifest.WriteString(sum + "  " + name + "\n")
		}
		if err := os.WriteFile(filepath.Join(bins, "plugins.sha256"), []byte(manifest.String()), 0o644); err != nil {
			return 1, err
		}
	}
	binTmp = tmp
	testPlugin = filepath.Join(tmp, "testplugin")
	if err := goBuild(testPlugin, "./e2e/testplugin"); err != nil {
		return 1, err
	}
	testPluginSum, err = sha256File(testPlugin)
	return 0, err
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

func goBuild(out, pkg string, flags ...string) error {
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, pkg)...)
	cmd.Dir = repoRoot()
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

func sha256File(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// variant is a build of e2e/testplugin with -X main.variant (see its doc).
type variant struct {
	once      sync.Once
	path, sum string
	err       error
}

var variants sync.Map // name → *variant

// pluginVariant builds the named test plugin variant once per run, as
// testplugin-<name>: its own binary, so its own checksum and cache entry.
func pluginVariant(t testing.TB, name string) (path, sum string) {
	t.Helper()
	v, _ := variants.LoadOrStore(name, &variant{})
	b := v.(*variant)
	b.once.Do(func() {
		b.path = filepath.Join(binTmp, "testplugin-"+name)
		if b.err = goBuild(b.path, "./e2e/testplugin", "-ldflags", "-X main.variant="+name); b.err == nil {
			b.sum, b.err = sha256File(b.path)
		}
	})
	if b.err != nil {
		t.Fatalf("build test plugin %s: %v", name, b.err)
	}
	return b.path, b.sum
}

// env is one isolated installation: data dir, config dir, plugin dir.
type env struct {
	t       testing.TB
	dataDir string
	config  string
	binDir  string
	hostDir string // the host's working directory ("" = the temp dir)
	extra   []string
	pins    map[string]string // [plugins] beyond the default test plugin
	storage string            // a [storage] section (usePostgres), "" = bbolt
	dsn     string            // its database when on PostgreSQL
}

// newEnv makes a fresh data dir (short path: it holds a unix socket) and a
// config that pins the test plugin. Engines it spawned are killed at the end.
func newEnv(t testing.TB) *env {
	t.Helper()
	dir, err := os.MkdirTemp("", "aim")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dataDir: filepath.Join(dir, "d"), config: filepath.Join(dir, "config.toml"), binDir: bins}
	e.writeConfig("")
	if os.Getenv(envBackend) == "postgres" {
		e.usePostgres(pgtest.DSN(t))
	}
	t.Cleanup(func() {
		for _, p := range processesMentioning(dir) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		os.RemoveAll(dir)
	})
	return e
}

// pin adds test plugin variants to [plugins]; call before writeConfig.
func (e *env) pin(names ...string) {
	if e.pins == nil {
		e.pins = map[string]string{}
	}
	for _, n := range names {
		path, sum := pluginVariant(e.t, n)
		e.pins[path] = sum
	}
	e.writeConfig("")
}

// writeConfig writes config.toml with the test plugins pinned plus extra TOML.
func (e *env) writeConfig(extra string) {
	cfg := fmt.Sprintf("[plugins]\n%q = %q\n", testPlugin, testPluginSum)
	for path, sum := range e.pins {
		cfg += fmt.Sprintf("%q = %q\n", path, sum)
	}
	cfg += extra + "\n" + e.storage
	if err := os.WriteFile(e.config, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) environ(extra ...string) []string {
	out := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Dir(e.dataDir),
		"AI_MEMORY_DATA_DIR=" + e.dataDir,
		"AI_MEMORY_CONFIG=" + e.config,
		"AI_MEMORY_PLUGIN_DIR=" + e.binDir,
		"AI_MEMORY_ENGINE_IDLE_TIMEOUT=3s",
	}
	if race := os.Getenv("GORACE"); race != "" {
		out = append(out, "GORACE="+race) // race-built binaries report to a file
	}
	out = append(out, e.extra...)
	return append(out, extra...)
}

// host is a running `ai-memory mcp` with an MCP client attached.
type host struct {
	t      testing.TB
	c      *client.Client
	cmd    *exec.Cmd
	stderr *syncBuffer

	mu            sync.Mutex
	notifications []string
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startHost spawns the host with args and initializes an MCP session.
func (e *env) startHost(args []string, envExtra ...string) *host {
	e.t.Helper()
	h := &host{t: e.t, stderr: &syncBuffer{}}
	tr := transport.NewStdioWithOptions(filepath.Join(e.binDir, "ai-memory"), e.environ(envExtra...), append([]string{"mcp"}, args...),
		transport.WithCommandStderrWriter(h.stderr),
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Dir = e.hostDir
			if cmd.Dir == "" {
				cmd.Dir = filepath.Dir(e.dataDir) // outside any git work tree: the default namespace is global
			}
			h.cmd = cmd
			return cmd, nil
		}))
	h.c = client.NewClient(tr)
	if err := h.c.Start(context.Background()); err != nil {
		e.t.Fatalf("start host: %v", err)
	}
	h.c.OnNotification(func(n mcp.JSONRPCNotification) {
		h.mu.Lock()
		h.notifications = append(h.notifications, n.Method)
		h.mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18" // what harnesses speak today
	req.Params.ClientInfo = mcp.Implementation{Name: "e2e-harness", Version: "1"}
	if _, err := h.c.Initialize(ctx, req); err != nil {
		e.t.Fatalf("initialize: %v\nstderr:\n%s", err, h.stderr.String())
	}
	e.t.Cleanup(h.close)
	return h
}

func (h *host) close() {
	h.c.Close()
	if h.cmd != nil && h.cmd.Process != nil {
		h.cmd.Process.Kill()
	}
}

// kill9 kills the host process with SIGKILL.
func (h *host) kill9() {
	h.t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		h.t.Fatalf("kill host: %v", err)
	}
	h.cmd.Wait()
}

func (h *host) pid() int { return h.cmd.Process.Pid }

func (h *host) toolNames() []string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		h.t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// call runs a tool and returns its text and isError.
func (h *host) call(name string, args any) (string, bool) {
	h.t.Helper()
	text, isErr, err := h.tryCall(name, args)
	if err != nil {
		h.t.Fatalf("tools/call %s: %v\nstderr:\n%s", name, err, h.stderr.String())
	}
	return text, isErr
}

func (h *host) tryCall(name string, args any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := h.c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), res.IsError, nil
}

// ok runs a tool that must succeed and decodes its JSON result.
func (h *host) ok(name string, args any) map[string]any {
	h.t.Helper()
	text, isErr := h.call(name, args)
	if isErr {
		h.t.Fatalf("%s %v: unexpected error: %s", name, args, text)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		h.t.Fatalf("%s result is not JSON: %v\n%s", name, err, text)
	}
	return out
}

// fails runs a tool that must return isError containing want.
func (h *host) fails(name string, args any, want string) {
	h.t.Helper()
	text, isErr := h.call(name, args)
	if !isErr || !strings.Contains(text, want) {
		h.t.Errorf("%s %v: got isError=%v %q, want error containing %q", name, args, isErr, text, want)
	}
}

func (h *host) sawNotification(method string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.notifications {
		if m == method {
			return true
		}
	}
	return false
}

// processesMentioning lists live pids whose command line contains s.
func processesMentioning(s string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(st) {
			continue
		}
		out = append(out, pid)
	}
	return out
}

func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}

// childrenOf lists live pids whose parent is ppid and whose command line contains s.
func childrenOf(ppid int, s string) []int {
	var out []int
	for _, pid := range processesMentioning(s) {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(st, ')')
		fields := strings.Fields(string(st[i+2:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}

// command is exec.Command for a run that must end: one still running
// after testwait.Deadline is killed and the test fails saying so.
func command(t testing.TB, name string, args ...string) *exec.Cmd {
	return commandWithin(t, testwait.Deadline, name, args...)
}

// toolDeadline bounds a build, an install or another language's test
// suite, which take minutes where a CLI run takes seconds.
const toolDeadline = 10 * time.Minute

// commandWithin is command with its own bound.
func commandWithin(t testing.TB, d time.Duration, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error {
		t.Errorf("%s %s still running after %v: killed", filepath.Base(name), strings.Join(args, " "), d)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = d // output pipes a leftover child holds open end too
	return cmd
}

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", timeout, what)
}
