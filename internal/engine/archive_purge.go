package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// DefaultPurgeInterval is how often the engine looks for archive rows
// older than archive_max_days.
const DefaultPurgeInterval = time.Hour

// archivePurger purges archive rows (and superseded versions) older than
// maxAge on the engine's own schedule: once at start, then on every tick,
// whether or not any host or daemon is connected. It runs as the engine
// (authz.System), so every namespace's rows age out alike.
type archivePurger struct {
	st     storage.Archive
	maxAge time.Duration
	now    func() time.Time
	hold   func() (release func()) // keeps the engine from idling out mid-purge
	log    *slog.Logger
}

// purgeOnce purges what is older than maxAge now.
func (p *archivePurger) purgeOnce(ctx context.Context) (*aimemoryv1.PurgeArchiveResponse, error) {
	if p.hold != nil {
		defer p.hold()()
	}
	before := p.now().Add(-p.maxAge).UnixNano()
	resp, err := p.st.PurgeArchive(authz.System(ctx), &aimemoryv1.PurgeArchiveRequest{Before: before})
	if err != nil {
		p.log.Error("scheduled archive purge failed", "err", err)
		return nil, err
	}
	if resp.GetPurged()+resp.GetVersionsPurged() > 0 {
		p.log.Info("archive purged", "rows", resp.GetPurged(), "versions", resp.GetVersionsPurged(), "older_than", p.maxAge)
	}
	return resp, nil
}

// run purges at once and on every tick until ctx ends; done (if set)
// hears each pass, for tests.
func (p *archivePurger) run(ctx context.Context, tick <-chan time.Time, done chan<- error) {
	for {
		_, err := p.purgeOnce(ctx)
		if done != nil {
			done <- err
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}
