// Package pgstore is the PostgreSQL storage backend: several engines, on
// several machines, share one database as equal peers. Records live in
// PostgreSQL; constraints and SERIALIZABLE transactions (retried on a
// serialization failure) keep writes correct, so engines sharing a database
// need no lock of their own. Migrations are goose's, embedded, applied at
// open under goose's advisory session lock. Background tasks run on one
// engine at a time under advisory locks (lead.go).
//
// Ranking is boltstore's exactly: each memory's term list is produced by
// the same Go analyzer and stored with its frequencies (memories.terms,
// tfs; GIN-indexed), and keyword search, list and stats run on the same
// in-memory index (package index), loaded from those lists at open and
// caught up from the change log (table changes) after each write and
// before each read, so every engine sees every engine's writes
// (catchup.go).
//
// Vectors are a plain column with a per-engine copy searched exactly as
// boltstore searches (vectors.go), pgvector when the server has it
// (pgvector.go); backend differences are capability flags.
//
// Every write step is the one in package ops that boltstore runs too; what
// is this backend's own is its transactions, reads, catch-up, the event
// log's ordering (events.go) and delivery claims (subscriptions.go).
package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/governance"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
)

// stemCacheSize bounds the analyzer's stem cache, as boltstore's.
const stemCacheSize = 1 << 16

// EnvDSN is the environment variable an engine reads its DSN from.
const EnvDSN = "AI_MEMORY_POSTGRES_DSN"

// Store is an open PostgreSQL backend. Its methods are safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	ttl    storage.TTL
	policy storage.WritePolicy
	gov    *governance.Config
	events storage.Publisher
	now    func() time.Time
	log    *slog.Logger
	an     *keyword.Analyzer
	// committed is told of each commit (storage.Options.Committed).
	committed func(writes int, took time.Duration)

	// writeMu orders this engine's commits and their index updates the
	// same way (an index change must apply to the state it was made on).
	writeMu sync.Mutex
	// syncMu orders catch-ups from the change log (catchup.go); pos is
	// where idx is in it.
	syncMu sync.Mutex
	idx    *index.Index
	pos    logPos
	closed bool

	vecs *vecset.Set    // the vectors' copy, caught up with idx (vectors.go)
	pgv  *pgvectorState // set at open (pgvector.go)

	// claimID names this store in the delivery claims it takes
	// (subscriptions.go): unique per Open.
	claimID string
	// sealKey is what BindSealKey found (sealkey.go).
	sealKey sealKeyState
	// subs is the copy of the subscriptions writes match against (events.go).
	subs subsCache
	// audit keys the audit log (audit.go).
	audit *audit.Chain
	// listeners are the delivery wake-up goroutines (deliverywake.go).
	listeners listeners
}

// Open connects to dsn, applies the embedded migrations under the
// migration lock (refusing a database newer than this build), and loads
// the keyword index from the stored term lists.
func Open(ctx context.Context, dsn string, opts storage.Options) (*Store, error) {
	opts = opts.WithDefaults()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres dsn: %w", redactedErr(err))
	}
	cfg.ConnConfig.ConnectTimeout = opts.OpenTimeout
	octx, cancel := context.WithTimeout(ctx, opts.OpenTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(octx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres connect: %w", err)
	}
	if err := pool.Ping(octx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres %s unreachable: %w", target(&cfg.ConnConfig.Config), err)
	}
	if err := migrate(ctx, pool, opts.Logger); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{
		pool:   pool,
		ttl:    opts.TTL,
		policy: opts.Policy,
		gov:    opts.Governance,
		events: opts.Events,
		now:    opts.Now,
		log:    opts.Logger,
		audit:  opts.Audit,
		an:     keyword.NewAnalyzer(stemCacheSize),

		committed: opts.Committed,

		claimID: newClaimID(),
	}
	s.detectPgvector(ctx)
	start := time.Now()
	if s.idx, s.pos, err = s.loadIndex(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: load index: %w", err)
	}
	_, terms := s.idx.Sizes()
	s.log.Info("store open", "backend", "postgres", "memories", s.idx.Count(), "terms", terms, "load", time.Since(start))
	return s, nil
}

// loadIndex builds the keyword index from every stored memory's term
// list, in one pass (index.Load's contract), and its change log position
// in the same snapshot.
func (s *Store) loadIndex(ctx context.Context) (*index.Index, logPos, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, logPos{}, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	pos, err := loadPos(ctx, tx)
	if err != nil {
		return nil, logPos{}, err
	}
	idx, err := loadDocs(ctx, tx)
	if err != nil {
		return nil, logPos{}, err
	}
	if s.vecs, err = loadVectors(ctx, tx); err != nil {
		return nil, logPos{}, err
	}
	return idx, pos, nil
}

func loadDocs(ctx context.Context, tx pgx.Tx) (*index.Index, error) {
	idx := index.New()
	rows, err := tx.Query(ctx, `SELECT record, terms, tfs FROM memories ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		raw   []byte
		terms []string
		tfs   []int32
	)
	for rows.Next() {
		if err := rows.Scan(&raw, &terms, &tfs); err != nil {
			return nil, err
		}
		m, err := decodeMemory(raw)
		if err != nil {
			return nil, err
		}
		err = idx.Load(m, func(yield func([]byte, uint32)) error {
			for i, t := range terms {
				yield([]byte(t), uint32(tfs[i]))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	idx.Loaded()
	return idx, nil
}

// SchemaVersion is the newest migration this build has.
func (s *Store) SchemaVersion() uint32 { return uint32(SchemaVersion) }

// Close closes the pool; it waits for calls in flight.
func (s *Store) Close() error {
	s.writeMu.Lock()
	s.closed = true
	s.writeMu.Unlock()
	s.stopListeners()
	s.pool.Close()
	return nil
}

// Count is the number of stored memories this engine's index holds.
func (s *Store) Count() int { return s.idx.Count() }

func (s *Store) nowNanos() int64 { return s.now().UnixNano() }
