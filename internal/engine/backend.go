package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
)

// openedBackend is the store the engine serves (package records over the
// backend's seam), with what Health says of it.
type openedBackend struct {
	storage.Backend
	name, location string
}

// openBackend opens the data dir's backend: the bbolt file in the data dir,
// or the PostgreSQL database engine.toml (or AI_MEMORY_POSTGRES_DSN)
// names, shared with every engine pointed at it. The DSN is never logged
// or reported with its password.
func openBackend(ctx context.Context, dir string, set settings.Settings, opts storage.Options) (*openedBackend, error) {
	if !set.Storage.Postgres() {
		path := filepath.Join(dir, DBFile)
		st, err := boltstore.Open(ctx, path, opts)
		if err != nil {
			return nil, err
		}
		return &openedBackend{Backend: records.New(st), name: "bbolt", location: path}, nil
	}
	var fromFile string
	if set.Storage.DSN != nil {
		fromFile = *set.Storage.DSN
	}
	dsn, source, err := pgstore.ResolveDSN(fromFile, os.Getenv(pgstore.EnvDSN))
	if err != nil {
		return nil, err
	}
	if opts.OpenTimeout == 0 {
		opts.OpenTimeout = 10 * time.Second // a network round trip or several, not a local file lock
	}
	where := pgstore.Redact(dsn)
	opts.Logger.Info("opening postgres backend", "database", where, "dsn_from", source)
	st, err := pgstore.Open(ctx, dsn, opts)
	if err != nil {
		return nil, fmt.Errorf("postgres backend (%s, from %s): %w", where, source, err)
	}
	return &openedBackend{Backend: records.New(st), name: "postgres", location: where}, nil
}

// seenRecorder is the agent registry's last-seen bookkeeping
// (records.Store keeps it over every backend).
type seenRecorder interface {
	NoteSeen(principal string)
	FlushSeen(ctx context.Context) (int, error)
}

// runLed runs task's work while this engine leads it (storage.Leadership;
// a backend without it is this engine's alone, which always leads): work
// gets a context that ends when the leadership is lost or ctx ends, and is
// started again on the next leadership.
func runLed(ctx context.Context, b storage.Backend, task string, log *slog.Logger, work func(context.Context)) {
	l, ok := storage.As[storage.Leadership](b)
	if !ok {
		work(ctx)
		return
	}
	for ctx.Err() == nil {
		lost, release, err := l.Lead(ctx, task)
		if err != nil {
			return // ctx ended
		}
		wctx, cancel := context.WithCancel(ctx)
		wasLost := make(chan bool, 1)
		go func() {
			select {
			case <-lost:
				log.Warn("leadership lost; another engine takes over", "task", task)
				wasLost <- true
			case <-wctx.Done():
				wasLost <- false
			}
			cancel()
		}()
		work(wctx)
		cancel()
		release()
		if !<-wasLost {
			return // ctx ended, or the work stopped by itself
		}
	}
}
