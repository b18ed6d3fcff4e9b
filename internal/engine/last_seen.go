package engine

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
)

// seenFlushInterval is how often last-seen times reach the registry's
// records; between flushes ListAgents reads them from memory.
const seenFlushInterval = time.Minute

// noteSeen records, for every verified plugin call, that its identity was
// seen now: a map write in memory, never a transaction on the call's path.
// Host calls (the keeper, doctor) are not an agent's.
func noteSeen(st seenRecorder) grpc.ServerOption {
	note := func(ctx context.Context) {
		if c, ok := caller.FromContext(ctx); ok && !c.IsHost() {
			st.NoteSeen(c.Principal)
		}
	}
	return grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		note(ctx)
		return h(ctx, req)
	})
}

// flushSeenEvery writes the noted last-seen times into the registry on a
// schedule until ctx ends.
func flushSeenEvery(ctx context.Context, st seenRecorder, interval time.Duration, log *slog.Logger) {
	every(ctx, interval, func() {
		if _, err := st.FlushSeen(ctx); err != nil {
			log.Warn("registry last-seen flush failed", "err", err)
		}
	})
}

// every runs do every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, do func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			do()
		}
	}
}

// grantsReload is how often the engine rereads who has subscriptions (for
// those other engines of a shared database made).
const grantsReload = time.Minute

// noteGrants hands every verified plugin call's caller to grants, which
// records a subscriber's changed grant (webhook.Grants). Host calls carry
// the host's own grant, not a principal's credential.
func noteGrants(g *webhook.Grants) grpc.ServerOption {
	return grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if c, ok := caller.FromContext(ctx); ok && !c.IsHost() {
			g.Note(ctx, c)
		}
		return h(ctx, req)
	})
}
