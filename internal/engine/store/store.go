// Package store is the only code that opens the engine's bbolt file. It
// keeps memory records and their indexes (unique title, keyword, expiry,
// links) and the archive, and writes each engine request in one bbolt
// transaction, fsynced before it returns.
//
// Keyword search runs on an in-memory inverted index derived at open from
// the per-memory term lists stored in bbolt; every write updates the stored
// lists in its transaction and the in-memory index right after the commit,
// while still holding the store's writer lock.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// TTL says how long memories of each tier live and how far a recall pushes
// an expiry out. A zero duration for a tier means "never expires".
type TTL struct {
	Short, Mid, Long       time.Duration
	ShortExtend, MidExtend time.Duration
}

// DefaultTTL is data-model §4: short 6 h, mid 7 d, long none; a recall
// extends short to at least now+1 h and mid to at least now+1 d.
func DefaultTTL() TTL {
	return TTL{
		Short:       6 * time.Hour,
		Mid:         7 * 24 * time.Hour,
		ShortExtend: time.Hour,
		MidExtend:   24 * time.Hour,
	}
}

// forTier is the TTL of a tier; 0 = no expiry.
func (t TTL) forTier(tier string) time.Duration {
	switch tier {
	case "short":
		return t.Short
	case "mid":
		return t.Mid
	case "long":
		return t.Long
	}
	return 0
}

// expiresAt is the expiry of a memory of tier written at now; 0 = none.
func (t TTL) expiresAt(tier string, now int64) int64 {
	d := t.forTier(tier)
	if d <= 0 {
		return 0
	}
	return now + int64(d)
}

// Publisher receives every committed write, after the commit.
type Publisher interface {
	Publish(*aimemoryv1.Event)
}

// Options configure a Store. The zero value is usable.
type Options struct {
	// TTL per tier; the zero value means DefaultTTL().
	TTL TTL
	// Policy is asked before every store, update and delete; nil allows all.
	Policy WritePolicy
	// Events receives committed writes; nil drops them.
	Events Publisher
	// Now is the clock (tests move it); nil means time.Now.
	Now func() time.Time
	// OpenTimeout bounds the wait for bbolt's file lock; 0 means 5 s.
	OpenTimeout time.Duration
	// Logger for open-time reports; nil discards.
	Logger *slog.Logger
}

// stemCacheSize bounds the stem cache (a few MiB at most).
const stemCacheSize = 1 << 16

// Store is an open memory database. Its methods are safe for concurrent use.
type Store struct {
	db     *bolt.DB
	path   string
	ttl    TTL
	policy WritePolicy
	events Publisher
	now    func() time.Time
	log    *slog.Logger

	an *keyword.Analyzer
	// writeMu orders commits and their in-memory index updates the same way.
	writeMu sync.Mutex
	idx     *index
}

// Open opens (creating if needed) the bbolt file at path, checks or
// initialises its schema, and loads the in-memory keyword index.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.TTL == (TTL{}) {
		opts.TTL = DefaultTTL()
	}
	if opts.Policy == nil {
		opts.Policy = AllowAll{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OpenTimeout <= 0 {
		opts.OpenTimeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.OpenTimeout})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("open %s: another process holds the database lock: %w", path, err)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{
		db:     db,
		path:   path,
		ttl:    opts.TTL,
		policy: opts.Policy,
		events: opts.Events,
		now:    opts.Now,
		log:    opts.Logger,
		an:     keyword.NewAnalyzer(stemCacheSize),
	}
	if err := s.db.Update(migrate); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	start := time.Now()
	idx, err := loadIndex(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: load index: %w", path, err)
	}
	s.idx = idx
	s.log.Info("store open", "path", path, "memories", idx.count(), "terms", len(idx.termIDs), "load", time.Since(start))
	return s, nil
}

// Close closes the database file.
func (s *Store) Close() error { return s.db.Close() }

// Path is the database file's path.
func (s *Store) Path() string { return s.path }

// Count is the number of stored memories, expired-but-uncollected included.
func (s *Store) Count() int { return s.idx.count() }

func (s *Store) nowNanos() int64 { return s.now().UnixNano() }
