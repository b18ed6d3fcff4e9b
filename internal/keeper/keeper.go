// Package keeper keeps a data dir's engine running for as long as a host
// lives. It holds the host's call session (Calls/Track, driven by an
// assertion.Tracker) open to the engine: the open connection keeps the
// engine from idling out, the session is what the host signs tool calls'
// assertions into, and the stream breaking is how the host learns the
// engine died, so it respawns it at once.
package keeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine/launcher"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Keeper watches one engine.
type Keeper struct {
	ready chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error
}

// Ready is closed once the engine first answered (or failed to start).
func (k *Keeper) Ready() <-chan struct{} { return k.ready }

// Err is why the engine is unavailable, or nil.
func (k *Keeper) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

func (k *Keeper) set(err error) {
	k.mu.Lock()
	k.err = err
	k.mu.Unlock()
	k.once.Do(func() { close(k.ready) })
}

// Start ensures the engine runs (spawning `exe engine` if needed) and keeps
// it so until ctx ends, with calls' session open. dial carries the host's
// engine credentials. Ready is closed once the first session is open.
func Start(ctx context.Context, exe, dataDir string, idle time.Duration, log *slog.Logger, calls *assertion.Tracker, dial ...grpc.DialOption) *Keeper {
	k := &Keeper{ready: make(chan struct{})}
	go k.run(ctx, exe, dataDir, idle, log, calls, dial)
	return k
}

func (k *Keeper) run(ctx context.Context, exe, dataDir string, idle time.Duration, log *slog.Logger, calls *assertion.Tracker, dial []grpc.DialOption) {
	for ctx.Err() == nil {
		socket, err := launcher.EnsureRunning(ctx, exe, dataDir, idle, dial...)
		if err != nil {
			k.set(err)
			log.Error("memory engine unavailable; retrying", "data_dir", dataDir, "err", err)
			sleep(ctx, time.Second)
			continue
		}
		err = watch(ctx, socket, k, calls, dial)
		if ctx.Err() != nil {
			return
		}
		log.Warn("memory engine connection lost; restarting it", "err", err)
		sleep(ctx, 50*time.Millisecond) // never spin if the engine keeps failing
	}
}

// watch holds the call session open until it breaks.
func watch(ctx context.Context, socket string, k *Keeper, calls *assertion.Tracker, dial []grpc.DialOption) error {
	conn, err := wire.DialEngineAt(socket, dial...)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Fail fast: the keeper must notice a dead engine, not wait for it.
	hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
	health, err := conn.Health(hctx, &aimemoryv1.HealthRequest{}, grpc.WaitForReady(false))
	hcancel()
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := conn.Track(wctx, grpc.WaitForReady(false))
	if err != nil {
		return err
	}
	err = calls.Serve(stream, func() { k.set(nil) })
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	if status.Code(err) == codes.Unimplemented {
		// An engine older than this host (still running from before an
		// upgrade) has no call sessions, so no plugin call could pass it,
		// and this keeper's connection would keep it from idling out:
		// stop it, and the next round starts this host's engine.
		syscall.Kill(int(health.GetPid()), syscall.SIGTERM)
		return fmt.Errorf("the running engine (version %s, pid %d) predates this host's call sessions; stopped it: %w", health.GetVersion(), health.GetPid(), err)
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
