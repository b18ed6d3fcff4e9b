// Package keeper keeps a data dir's engine running for as long as a host
// lives. It holds one liveness stream (WatchEvents with liveness_only) open
// to the engine: the open connection keeps the engine from idling out, and
// the stream breaking is how the host learns the engine died, so it
// respawns it at once.
package keeper

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/engine/launcher"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
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
// it so until ctx ends. dial carries the host's engine credentials.
func Start(ctx context.Context, exe, dataDir string, idle time.Duration, log *slog.Logger, dial ...grpc.DialOption) *Keeper {
	k := &Keeper{ready: make(chan struct{})}
	go k.run(ctx, exe, dataDir, idle, log, dial)
	return k
}

func (k *Keeper) run(ctx context.Context, exe, dataDir string, idle time.Duration, log *slog.Logger, dial []grpc.DialOption) {
	for ctx.Err() == nil {
		socket, err := launcher.EnsureRunning(ctx, exe, dataDir, idle, dial...)
		if err != nil {
			k.set(err)
			log.Error("memory engine unavailable; retrying", "data_dir", dataDir, "err", err)
			sleep(ctx, time.Second)
			continue
		}
		err = watch(ctx, socket, k, dial)
		if ctx.Err() != nil {
			return
		}
		log.Warn("memory engine connection lost; restarting it", "err", err)
		sleep(ctx, 50*time.Millisecond) // never spin if the engine keeps failing
	}
}

// watch holds a liveness stream open until it breaks.
func watch(ctx context.Context, socket string, k *Keeper, dial []grpc.DialOption) error {
	conn, err := sdk.DialEngineAt(socket, dial...)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Fail fast: the keeper must notice a dead engine, not wait for it.
	hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = conn.Health(hctx, &aimemoryv1.HealthRequest{}, grpc.WaitForReady(false))
	hcancel()
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Liveness only: the host has no use for the events, and receiving
	// each one cost every write a message on both sides.
	stream, err := conn.WatchEvents(wctx, &aimemoryv1.WatchEventsRequest{LivenessOnly: true}, grpc.WaitForReady(false))
	if err != nil {
		return err
	}
	k.set(nil)
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil
			}
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
