package launcher

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine"
	"github.com/ai-memory/ai-memory/internal/testwait"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestMain lets the test binary stand in for `ai-memory engine`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "engine" {
		fs := flag.NewFlagSet("engine", flag.ExitOnError)
		dir := fs.String("data-dir", "", "")
		idle := fs.Duration("idle-timeout", engine.DefaultIdleTimeout, "")
		fs.Parse(os.Args[2:])
		err := engine.Run(context.Background(), engine.Options{DataDir: *dir, IdleTimeout: *idle})
		if err != nil && !errors.Is(err, engine.ErrAlreadyRunning) {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "aim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "d")
}

// waitStopped waits until no engine holds dir's lock.
func waitStopped(t *testing.T, dir string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		f, err := os.Open(filepath.Join(dir, engine.LockFile))
		if err != nil {
			t.Fatal(err)
		}
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		f.Close()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine still running after %v", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pid(t *testing.T, sock string) int64 {
	t.Helper()
	c, err := wire.DialEngineAt(sock, hostCreds(t, filepath.Dir(sock)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := c.Health(context.Background(), &aimemoryv1.HealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return h.Pid
}

func TestTwoHostsShareOneEngine(t *testing.T) {
	dir := shortDir(t)
	exe, _ := os.Executable()
	ctx := context.Background()
	var wg sync.WaitGroup
	socks := make([]string, 2)
	errs := make([]error, 2)
	for i := range socks {
		creds := hostCreds(t, dir) // on the test goroutine: it may end the test
		wg.Go(func() { socks[i], errs[i] = EnsureRunning(ctx, exe, dir, time.Second, creds) })
	}
	testwait.Wait(t, &wg, "both EnsureRunning calls")
	for i, err := range errs {
		if err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
	}
	if socks[0] != socks[1] || socks[0] != engine.SocketPath(dir) {
		t.Fatalf("sockets %q", socks)
	}
	first := pid(t, socks[0])
	// A later host finds it running and starts nothing.
	sock, err := EnsureRunning(ctx, exe, dir, time.Second, hostCreds(t, dir))
	if err != nil || pid(t, sock) != first || pid(t, socks[1]) != first {
		t.Fatalf("third host: %v; pids differ", err)
	}
	if first == int64(os.Getpid()) {
		t.Fatal("engine ran in the host process")
	}
	// With every client gone the engine exits after its idle timeout.
	waitStopped(t, dir, 10*time.Second)
	if _, err := os.Stat(engine.SocketPath(dir)); !os.IsNotExist(err) {
		t.Error("socket left after idle exit")
	}
}

func TestEngineThatCannotStart(t *testing.T) {
	dir := shortDir(t)
	_, err := EnsureRunning(context.Background(), "/bin/false", dir, time.Second, hostCreds(t, dir))
	// Its exit is reported as such, not after the start timeout.
	if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "engine.log") {
		t.Fatalf("err = %v", err)
	}
}

func hostCreds(t testing.TB, dir string) grpc.DialOption {
	t.Helper()
	creds, err := assertion.HostDial(dir, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	return creds
}
