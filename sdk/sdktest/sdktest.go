// Package sdktest runs a real engine for a plugin's tests: the same server,
// store and bbolt file the product uses, in a temporary data dir, reached
// over a unix socket exactly as a plugin reaches it in production.
//
//	func TestRecall(t *testing.T) {
//		eng := sdktest.StartEngine(t)
//		resp, err := eng.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{...})
//		...
//	}
package sdktest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
)

// Engine is a client of a test engine. Its own calls are made as a host
// would make them (family "host", principal DirectPrincipal); Assert mints
// the assertion a host would hand a plugin for one tool call.
type Engine struct {
	*sdk.EngineConn
	DataDir string
	signer  *assertion.Signer
}

// DirectPrincipal is who the Engine's own calls are made for.
const DirectPrincipal = "sdktest"

// Assert returns the assertion a host would sign for a call of family's
// tool made for principal.
func (e *Engine) Assert(principal, family string) []byte {
	return e.signer.Mint(caller.Caller{Principal: principal, Session: "s1", Family: family})
}

// StartEngine starts an engine in this process on a fresh data dir and
// returns a client connected to it. Both are torn down, and the data dir
// removed, when the test ends. Engine warnings go to the test's output.
// Nothing global is changed: no signal handlers, no environment.
func StartEngine(t testing.TB) *Engine {
	t.Helper()
	// Not t.TempDir(): unix socket paths must stay under ~100 bytes, and
	// test names make TempDir paths long.
	root, err := os.MkdirTemp("", "aim")
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	dataDir := filepath.Join(root, "data")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- engine.Serve(ctx, engine.Options{
			DataDir:     dataDir,
			IdleTimeout: -1, // the test decides when it ends
			Logger:      slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
			Version:     "sdktest",
		})
	}()
	stop := func() {
		cancel()
		<-served
		os.RemoveAll(root)
	}

	// The engine creates the key too; whichever is first, both read one file.
	key, err := assertion.LoadOrCreateKey(dataDir)
	if err != nil {
		stop()
		t.Fatalf("sdktest: %v", err)
	}
	signer, err := assertion.NewSigner(key, nil)
	if err != nil {
		stop()
		t.Fatalf("sdktest: %v", err)
	}
	conn, err := sdk.DialEngineAt(engine.SocketPath(dataDir), signer.HostCredentials(DirectPrincipal, "s1"))
	if err != nil {
		stop()
		t.Fatalf("sdktest: %v", err)
	}
	if err := waitHealthy(conn, served); err != nil {
		conn.Close()
		stop()
		t.Fatalf("sdktest: engine did not start: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		stop()
	})
	return &Engine{EngineConn: conn, DataDir: dataDir, signer: signer}
}

// waitHealthy polls Health until the engine answers, it fails, or 10 s pass.
func waitHealthy(conn *sdk.EngineConn, served <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := conn.Health(ctx, &aimemoryv1.HealthRequest{})
		cancel()
		if err == nil {
			return nil
		}
		select {
		case serr := <-served:
			if serr == nil {
				serr = err
			}
			return serr
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}
