package engine

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// childEnv makes the test binary act as an engine process (see TestMain),
// so a test can kill a real engine with SIGKILL.
const childEnv = "AIM_TEST_ENGINE_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		err := Run(storagetest.Operator(), Options{DataDir: dir, IdleTimeout: -1})
		if err != nil && !errors.Is(err, ErrAlreadyRunning) {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// shortDir is a data dir whose socket path fits a sockaddr_un.
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "aim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "d")
}

// quiet sends an engine's logs to the test's output.
func quiet(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// serveAsync runs Serve and returns its result channel.
func serveAsync(ctx context.Context, opts Options) <-chan error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, opts) }()
	return done
}

// dial connects to dir's engine and waits until it answers Health.
func dial(t testing.TB, dir string) *wire.EngineConn {
	t.Helper()
	creds, err := assertion.HostDial(dir, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := wire.DialEngineAt(SocketPath(dir), creds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(storagetest.Operator(), 10*time.Second)
	defer cancel()
	for {
		if _, err := c.Health(ctx, &aimemoryv1.HealthRequest{}); err == nil {
			return c
		} else if ctx.Err() != nil {
			t.Fatalf("engine never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func wait(t *testing.T, done <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("engine still running after %v", within)
		return nil
	}
}

func TestAlreadyRunning(t *testing.T) {
	dir := shortDir(t)
	os.MkdirAll(dir, 0o700)
	unlock, err := lockDataDir(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	err = Serve(storagetest.Operator(), Options{DataDir: dir, Logger: quiet(t)})
	if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Serve with the lock held: %v", err)
	}
	if _, err := os.Stat(SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Error("the losing engine created a socket")
	}
}

func TestIdleExitWithoutClients(t *testing.T) {
	dir := shortDir(t)
	start := time.Now()
	if err := wait(t, serveAsync(storagetest.Operator(), Options{DataDir: dir, IdleTimeout: 200 * time.Millisecond}), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("exited after %v, before the idle timeout", d)
	}
	if _, err := os.Stat(SocketPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Error("socket left behind")
	}
	unlock, err := lockDataDir(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatalf("lock not released: %v", err)
	}
	unlock()
	for name, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, filepath.Join(dir, DBFile): 0o600} {
		if fi, err := os.Stat(name); err != nil || fi.Mode() != want {
			t.Errorf("%s mode %v, want %v", name, fi.Mode(), want)
		}
	}
}

func TestIdleWaitsForClients(t *testing.T) {
	dir := shortDir(t)
	done := serveAsync(storagetest.Operator(), Options{DataDir: dir, IdleTimeout: 300 * time.Millisecond})
	c := dial(t, dir)
	if fi, err := os.Stat(SocketPath(dir)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, %v", fi.Mode(), err)
	}
	select {
	case err := <-done:
		t.Fatalf("engine exited with a client connected: %v", err)
	case <-time.After(time.Second):
	}
	if _, err := c.Health(storagetest.Operator(), &aimemoryv1.HealthRequest{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := wait(t, done, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestStopOnCancel(t *testing.T) {
	dir := shortDir(t)
	ctx, cancel := context.WithCancel(storagetest.Operator())
	done := serveAsync(ctx, Options{DataDir: dir, IdleTimeout: -1})
	c := dial(t, dir)
	// An open watch stream must not hold the engine up.
	stream, err := c.WatchEvents(storagetest.Operator(), &aimemoryv1.WatchEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	_ = stream
	cancel()
	if err := wait(t, done, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestReopenAfterKill kills a real engine process with SIGKILL mid-life and
// checks that the next engine takes over the stale lock and socket with
// every acknowledged write intact.
func TestReopenAfterKill(t *testing.T) {
	dir := shortDir(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+dir)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, dir)
	ctx := storagetest.Operator()
	h, err := c.Health(ctx, &aimemoryv1.HealthRequest{})
	if err != nil || h.Pid != int64(child.Process.Pid) {
		t.Fatalf("health = %v, %v; want the child's pid %d", h, err, child.Process.Pid)
	}
	var ids []string
	for _, title := range []string{"before the crash", "acknowledged write"} {
		r, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "survives kill -9", Confidence: 1}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Memory.Id)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	c.Close()
	if _, err := os.Stat(SocketPath(dir)); err != nil {
		t.Fatalf("expected a stale socket after kill -9: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	done := serveAsync(cctx, Options{DataDir: dir, IdleTimeout: -1})
	defer func() {
		cancel()
		wait(t, done, 10*time.Second)
	}()
	c2 := dial(t, dir)
	got, err := c2.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: ids})
	if err != nil || len(got.Memories) != 2 {
		t.Fatalf("after restart: %v, %v", got, err)
	}
	sr, err := c2.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "survives kill", Limit: 5})
	if err != nil || len(sr.Results) != 2 {
		t.Errorf("search after restart: %v, %v", sr, err)
	}
}
