// Package sdktest runs a real engine for a plugin's tests: the product's
// own `ai-memory engine` process on a temporary data dir, reached over its
// unix socket exactly as a plugin reaches it in production. It imports
// nothing of the host's: the binary is found through AI_MEMORY_TEST_BIN (a
// directory holding ai-memory, as `make build` leaves bin/) or on PATH.
//
//	func TestTodo(t *testing.T) {
//		eng := sdktest.StartEngine(t)
//		notes := sdktest.NewFamily(t, "notes", Families(eng.SDK())).WithEngine(eng)
//		notes.OK("memory_note_todo", `{"text":"ship it"}`, nil)
//	}
package sdktest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/internal/bridge"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Engine is a client of a test engine. Its own calls are made as a host
// would make them (family "host", principal DirectPrincipal); Assert mints
// the assertion a host would hand a plugin for one tool call.
type Engine struct {
	*wire.EngineConn
	DataDir string
	Socket  string // the engine's unix socket: what sdk.Connect reads from wire.EngineSocketEnv
	key     []byte
	calls   *calls
}

// SDK is the engine as a handler's sdk.Engine: what sdk.Main would hand
// a family's constructor. A tool call's engine calls made through it carry
// that call's identity, as in production.
func (e *Engine) SDK() *sdk.Engine { return bridge.Engine(e.EngineConn).(*sdk.Engine) }

// DirectPrincipal is who the Engine's own calls are made for.
const DirectPrincipal = "sdktest"

// BinEnv names the directory holding the ai-memory binary the harness runs.
const BinEnv = "AI_MEMORY_TEST_BIN"

// Assert returns the assertion a host would sign for a call of family's
// tool made for principal, to be presented by this process, of a call
// that does not end while the engine runs (Family.Call ends each of its
// calls, after which the engine refuses their assertions).
func (e *Engine) Assert(principal, family string) []byte {
	a, _ := e.call(principal, family)
	return a
}

// call is the assertion of one call, and end, which reports it ended.
func (e *Engine) call(principal, family string) (assertion []byte, end func() error) {
	c, n := e.calls.begin(principal, family)
	return mint(e.key, c, n), func() error { return e.calls.end(n) }
}

// Binary is the path of the ai-memory binary: $AI_MEMORY_TEST_BIN/ai-memory,
// else ai-memory on PATH. The test fails, saying how to provide it, if
// neither exists.
func Binary(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv(BinEnv); dir != "" {
		p, err := filepath.Abs(filepath.Join(dir, "ai-memory"))
		if _, serr := os.Stat(p); err == nil && serr == nil {
			return p
		}
		t.Fatalf("sdktest: %s=%s holds no ai-memory binary (run make build)", BinEnv, dir)
	}
	p, err := exec.LookPath("ai-memory")
	if err != nil {
		t.Fatalf("sdktest: no ai-memory binary: set %s to the directory holding it, or put it on PATH", BinEnv)
	}
	return p
}

// StartEngine starts an engine process on a fresh data dir and returns a
// client connected to it. Both are torn down, and the data dir removed,
// when the test ends. The engine's stderr goes to the test's output.
func StartEngine(t testing.TB) *Engine {
	t.Helper()
	bin := Binary(t)
	// Not t.TempDir(): unix socket paths must stay under ~100 bytes, and
	// test names make TempDir paths long.
	root, err := os.MkdirTemp("", "aim")
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	dataDir := filepath.Join(root, "data")
	cmd := exec.Command(bin, "--data-dir", dataDir, "engine")
	cmd.Stderr = t.Output()
	cmd.Env = engineEnv(root, "AI_MEMORY_CONFIG="+filepath.Join(root, "config.toml"))
	cmd.SysProcAttr = engineProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(root)
		t.Fatalf("sdktest: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		os.RemoveAll(root)
	}

	key, err := waitKey(dataDir, exited)
	if err != nil {
		stop()
		t.Fatalf("sdktest: engine did not start: %v", err)
	}
	socket := filepath.Join(dataDir, "engine.sock")
	conn, err := wire.DialEngineAt(socket, hostCredentials(key, DirectPrincipal, "s1"))
	if err != nil {
		stop()
		t.Fatalf("sdktest: %v", err)
	}
	if err := waitHealthy(conn, exited); err != nil {
		conn.Close()
		stop()
		t.Fatalf("sdktest: engine did not start: %v", err)
	}
	ctx, endCalls := context.WithCancel(context.Background())
	calls, err := openCalls(ctx, conn)
	if err != nil {
		endCalls()
		conn.Close()
		stop()
		t.Fatalf("sdktest: call session: %v", err)
	}
	t.Cleanup(func() {
		endCalls()
		conn.Close()
		stop()
	})
	return &Engine{EngineConn: conn, DataDir: dataDir, Socket: socket, key: key, calls: calls}
}

// waitKey waits for the signing key the engine writes at start.
func waitKey(dataDir string, exited <-chan error) ([]byte, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		key, err := os.ReadFile(filepath.Join(dataDir, "engine.key"))
		if err == nil && len(key) >= 32 {
			return key, nil
		}
		select {
		case err := <-exited:
			return nil, errors.Join(errors.New("engine exited"), err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, errors.New("no engine.key after 10s")
		}
	}
}

// waitHealthy polls Health until the engine answers, it exits, or 10 s pass.
func waitHealthy(conn *wire.EngineConn, exited <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := conn.Health(ctx, &aimemoryv1.HealthRequest{})
		cancel()
		if err == nil {
			return nil
		}
		select {
		case serr := <-exited:
			return errors.Join(errors.New("engine exited"), serr, err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}
