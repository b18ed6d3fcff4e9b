// Package boltstore is the bbolt storage backend (storage.Backend): the
// only code that opens the engine's bbolt file. It
// keeps memory records and their indexes (unique title, keyword, expiry,
// links) and the archive. Each engine request's writes are atomic and
// fsynced before it returns; concurrent requests share a transaction and
// its fsync (group commit, tx.go).
//
// Keyword search runs on the in-memory index (package index), restored at
// open from its snapshot and log (snapshot.go) or rebuilt from the
// per-memory term lists stored in bbolt; every write updates the stored
// lists and the log in its transaction and the in-memory index right after
// the commit, while still holding the store's writer lock.
package boltstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/index"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
)

// Options configure a Store; see storage.Options.
type Options = storage.Options

// stemCacheSize bounds the stem cache (a few MiB at most).
const stemCacheSize = 1 << 16

// Store is an open memory database. Its methods are safe for concurrent use.
type Store struct {
	db     *bolt.DB
	path   string
	ttl    storage.TTL
	policy storage.WritePolicy
	gov    *governance.Config
	events storage.Publisher
	now    func() time.Time
	log    *slog.Logger
	audit  *audit.Chain // keys the audit log (audit.go)
	// committed is told of each commit (storage.Options.Committed).
	committed func(writes int, took time.Duration)

	an *keyword.Analyzer
	// writeMu orders commits and their in-memory index updates the same way.
	writeMu      sync.Mutex
	idx          *index.Index
	vecs         *vecset.Set // vectors.go
	largestBatch int         // the most writes one commit has taken (under writeMu)
	commits      int64       // group commits so far (under writeMu; benchmarks report writes per commit)
	// Under writeMu: the index snapshot's state (snapshot.go).
	logLen       int    // memories in the index log (or new since the snapshot)
	eventsSince  uint64 // events logged since the snapshot (at most, so far)
	snapshotDue  bool   // no usable snapshot: write one at Close at the latest
	snapshotting bool
	closed       bool
	bg           sync.WaitGroup
	rebuilt      bool // the index was rebuilt from the term lists at open

	// queueMu guards the writes waiting for the next group commit and
	// whether a caller is leading commits now (see write).
	queueMu sync.Mutex
	queue   []*writeReq
	leading bool
}

// Open opens (creating if needed) the bbolt file at path, checks or
// initialises its schema, and loads the in-memory keyword index.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts = opts.WithDefaults()
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
		gov:    opts.Governance,
		events: opts.Events,
		now:    opts.Now,
		log:    opts.Logger,
		audit:  opts.Audit,
		an:     keyword.NewAnalyzer(stemCacheSize),

		committed: opts.Committed,
	}
	if err := s.db.Update(migrate); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	start := time.Now()
	idx, logged, fresh, err := loadIndex(ctx, s)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: load index: %w", path, err)
	}
	s.idx, s.logLen, s.snapshotDue, s.rebuilt = idx, logged, fresh, fresh
	if err := s.loadVectors(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: load vectors: %w", path, err)
	}
	_, terms := idx.Sizes()
	s.log.Info("store open", "path", path, "memories", idx.Count(), "terms", terms,
		"from_snapshot", !fresh, "replayed", logged, "load", time.Since(start))
	if fresh { // even an empty one: from now on a kill -9 costs a replay, not a rebuild
		s.writeMu.Lock()
		s.startSnapshot()
		s.writeMu.Unlock()
	}
	return s, nil
}

// SchemaVersion is the layout this build reads and writes.
func (s *Store) SchemaVersion() uint32 { return SchemaVersion }

// Close writes an index snapshot if the last one is out of date, so the
// next open is quick, and closes the database file.
func (s *Store) Close() error {
	s.writeMu.Lock()
	closed := s.closed
	s.closed = true
	if !closed && (s.logLen > 0 || s.snapshotDue) {
		if err := s.writeSnapshot(); err != nil {
			s.log.Warn("index snapshot at close", "err", err)
		}
	}
	s.writeMu.Unlock()
	s.bg.Wait()
	return s.db.Close()
}

// Path is the database file's path.
func (s *Store) Path() string { return s.path }

// Count is the number of stored memories, expired-but-uncollected included.
func (s *Store) Count() int { return s.idx.Count() }

func (s *Store) nowNanos() int64 { return s.now().UnixNano() }

// Capabilities are the embedded backend's flags (storage.Capability).
func (s *Store) Capabilities() []storage.Capability {
	return []storage.Capability{
		{Name: storage.CapVectorIndex, On: false, Detail: "exact cosine scan of an in-memory copy"},
		{Name: storage.CapSharedStore, On: false, Detail: "one engine per data dir (bbolt file lock)"},
		{Name: storage.CapBackup, On: true, Detail: "consistent copy of the bbolt file while in use"},
		{Name: storage.CapBackgroundLeaders, On: false, Detail: "the one engine runs every background task"},
		{Name: storage.CapIndexFromChangeLog, On: false, Detail: "the index is the engine's own, with a snapshot and a log in the bbolt file"},
	}
}

var _ storage.Capabilities = (*Store)(nil)
