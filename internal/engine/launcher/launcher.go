// Package launcher gives a host the socket of its data dir's engine,
// starting the engine as a detached process when none answers. Two hosts
// launching at once both end up on the one engine that won the data dir's
// lock; the other engine exits 0 at once.
package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ai-memory/ai-memory/internal/engine"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// StartTimeout bounds how long EnsureRunning waits for a new engine.
const StartTimeout = 5 * time.Second

// EnsureRunning returns the socket path of dataDir's engine once it answers
// Health. If none answers, it starts `exe engine --data-dir D
// --idle-timeout idle` in its own session (so a terminal's signals and the
// host's exit leave it alone), stdin and stdout on /dev/null and stderr
// appended to D/engine.log, and polls until it answers or StartTimeout (or
// ctx) runs out.
//
// dial carries the host's credentials: the engine answers no call without
// a caller assertion, Health included.
func EnsureRunning(ctx context.Context, exe string, dataDir string, idle time.Duration, dial ...grpc.DialOption) (socketPath string, err error) {
	dir, err := filepath.Abs(dataDir)
	if err != nil {
		return "", fmt.Errorf("engine data dir: %w", err)
	}
	sock := engine.SocketPath(dir)
	if healthy(ctx, sock, dial) == nil {
		return sock, nil
	}
	exited, err := spawn(exe, dir, idle)
	if err != nil {
		return "", err
	}
	logPath := filepath.Join(dir, engine.LogFile)
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		lastErr := healthy(ctx, sock, dial)
		if lastErr == nil {
			return sock, nil
		}
		select {
		case err := <-exited:
			if err != nil {
				return "", fmt.Errorf("engine for %s exited: %w%s (see %s)", dir, err, lastLine(logPath), logPath)
			}
			exited = nil // lost the lock race: the winner will answer
		case <-ctx.Done():
			return "", fmt.Errorf("engine for %s did not answer within %v: %w (see %s)", dir, StartTimeout, lastErr, logPath)
		case <-time.After(delay):
			// A poll before the socket exists is one stat, so poll often: a
			// 100k-memory engine that is ready at 210 ms was found at 318 ms
			// with a 200 ms cap.
			delay = min(delay*3/2, 25*time.Millisecond)
		}
	}
}

// healthy calls Health on the socket once, failing fast if nothing listens.
func healthy(ctx context.Context, sock string, dial []grpc.DialOption) error {
	if _, err := os.Stat(sock); err != nil {
		return err
	}
	conn, err := grpc.NewClient("unix://"+sock, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dial...)...)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = aimemoryv1.NewEngineClient(conn).Health(ctx, &aimemoryv1.HealthRequest{})
	return err
}

// spawn starts the engine detached. The returned channel yields its exit
// status: the host reaps it (a Wait in the background) so an engine that
// exits while the host lives, such as the loser of a lock race, does not
// linger as a zombie; the engine never depends on the host otherwise.
func spawn(exe, dir string, idle time.Duration) (<-chan error, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("engine data dir: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, engine.LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("engine log: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(exe, "engine", "--data-dir", dir, "--idle-timeout", idle.String())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, logf // nil is /dev/null
	cmd.Dir = "/"                                      // hold no host directory open
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start engine %s: %w", exe, err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%s", ee.ProcessState)
		}
		exited <- err
	}()
	return exited, nil
}

// lastLine is ": " and the end of the log's last line (why the engine
// exited, as it said), or "" when there is none.
func lastLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	last := strings.TrimPrefix(lines[len(lines)-1], "ai-memory engine: ")
	if last == "" {
		return ""
	}
	if len(last) > 240 {
		last = last[:240] + "…"
	}
	return ": " + last
}
