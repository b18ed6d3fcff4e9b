package pgstore

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
)

// pgvector, used only when the server has the extension (detected at open
// from pg_available_extensions; AI_MEMORY_PGVECTOR=off declines it). Then
// vectors also get an `embedding vector` column, and Nearest asks an HNSW
// index (one partial expression index per dimension, made on the first
// vector of that dimension) for candidates, filtered here as the exact
// scan's are. Answers may differ from the exact scan within the index's
// approximation: that is capability storage.CapVectorIndex. The vector
// copy in memory is kept either way (HasVector, VectorStatus).
//
// NOT TESTED here: Debian 12's PostgreSQL has no pgvector package, so only
// the detection's "off" path runs in this repository's tests.

// EnvPgvector set to "off" keeps the exact scan even where pgvector exists.
const EnvPgvector = "AI_MEMORY_PGVECTOR"

// hnswMaxDims is pgvector's limit for an HNSW index on type vector.
const hnswMaxDims = 2000

type pgvectorState struct {
	on      bool
	detail  string
	mu      sync.Mutex
	indexed map[int]bool // dimensions with their index made
}

// pgvectorOn: Nearest goes through pgvector.
func (s *Store) pgvectorOn() bool { return s.pgv != nil && s.pgv.on }

// detectPgvector decides, once at open, whether this store uses pgvector:
// available, not declined, and installable (CREATE EXTENSION needs the
// privilege; without it the exact scan is used and doctor says why).
func (s *Store) detectPgvector(ctx context.Context) {
	s.pgv = &pgvectorState{indexed: map[int]bool{}}
	if os.Getenv(EnvPgvector) == "off" {
		s.pgv.detail = "declined (" + EnvPgvector + "=off): exact cosine scan of an in-memory copy"
		return
	}
	var version string
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(default_version), '') FROM pg_available_extensions WHERE name = 'vector'`).Scan(&version)
	if err != nil || version == "" {
		s.pgv.detail = "pgvector is not available on this server: exact cosine scan of an in-memory copy"
		return
	}
	if err := s.enablePgvector(ctx); err != nil {
		s.pgv.detail = fmt.Sprintf("pgvector %s is available but could not be enabled (%v): exact cosine scan of an in-memory copy", version, err)
		s.log.Warn("pgvector not enabled", "err", err)
		return
	}
	s.pgv.on = true
	s.pgv.detail = "pgvector " + version + ": HNSW index per dimension, approximate"
}

// enablePgvector installs the extension and its column, filled from the
// plain one, under an advisory lock (engines opening at once).
func (s *Store) enablePgvector(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, migrationLockID+1),
			`CREATE EXTENSION IF NOT EXISTS vector`,
			`ALTER TABLE vectors ADD COLUMN IF NOT EXISTS embedding vector`,
			`UPDATE vectors SET embedding = (SELECT array_agg(((get_byte(q, i) + 128) % 256 - 128) * scale ORDER BY i)
				FROM generate_series(0, length(q) - 1) AS i)::vector WHERE embedding IS NULL`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// pgvectorPut is putVector's statement when the embedding column exists.
// $6 is the vector dequantized (pgvector has no 8-bit type).
const pgvectorPut = `INSERT INTO vectors (id, model, hash, scale, q, embedding) VALUES ($1, $2, $3, $4, $5, $6::real[]::vector)
	ON CONFLICT (id) DO UPDATE SET model = EXCLUDED.model, hash = EXCLUDED.hash, scale = EXCLUDED.scale, q = EXCLUDED.q, embedding = EXCLUDED.embedding`

// ensureVectorIndex makes the HNSW index of each dimension puts have, once
// per engine (IF NOT EXISTS across engines). A failure is logged: Nearest
// still answers, by a sequential scan in the database.
func (s *Store) ensureVectorIndex(ctx context.Context, puts []storage.VectorPut) {
	s.pgv.mu.Lock()
	defer s.pgv.mu.Unlock()
	for _, p := range puts {
		d := len(p.Vector)
		if s.pgv.indexed[d] || d > hnswMaxDims {
			continue
		}
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS vectors_hnsw_%d ON vectors USING hnsw ((embedding::vector(%d)) vector_cosine_ops) WHERE length(q) = %d`, d, d, d)
		if _, err := s.pool.Exec(ctx, q); err != nil {
			s.log.Warn("pgvector index", "dims", d, "err", err)
			continue
		}
		s.pgv.indexed[d] = true
	}
}

// nearestPgvector asks the index for candidates, best first, and keeps
// those matching f; when the filter leaves fewer than limit of a full
// candidate list, the exact scan answers instead (the filter is too
// selective for an approximate index's first candidates).
func (s *Store) nearestPgvector(ctx context.Context, f *index.Filter, q []float32, model string, limit int, minCos float64) ([]index.Hit, error) {
	q = vecset.Normalize(q)
	d, k := len(q), max(10*limit, 100)
	sql := fmt.Sprintf(`SELECT id, 1 - (embedding::vector(%d) <=> $1::real[]::vector(%d)) FROM vectors
		WHERE length(q) = %d AND model = $2 AND embedding IS NOT NULL ORDER BY embedding::vector(%d) <=> $1::real[]::vector(%d) LIMIT $3`, d, d, d, d, d)
	rows, err := s.pool.Query(ctx, sql, q, model, k)
	if err != nil {
		return nil, fmt.Errorf("pgvector nearest: %w", err)
	}
	defer rows.Close()
	var ranked []index.Hit
	n := 0
	for rows.Next() {
		var h index.Hit
		if err := rows.Scan(&h.ID, &h.Score); err != nil {
			return nil, err
		}
		n++
		if h.Score >= minCos {
			ranked = append(ranked, h)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := vecset.Filtered(s.idx, f, ranked, limit, s.nowNanos())
	if len(out) < limit && n == k {
		return s.vecs.Nearest(s.idx, f, q, model, limit, minCos, s.nowNanos()), nil
	}
	return out, nil
}

// Capabilities are this backend's flags (storage.Capability), for doctor.
func (s *Store) Capabilities() []storage.Capability {
	vi := storage.Capability{Name: storage.CapVectorIndex}
	if s.pgv != nil {
		vi.On, vi.Detail = s.pgv.on, s.pgv.detail
	}
	return []storage.Capability{
		vi,
		{Name: storage.CapSharedStore, On: true, Detail: "engines share the database; transactions and constraints keep writes correct"},
		{Name: storage.CapBackup, On: false, Detail: "use pg_dump (or ai-memory export)"},
		{Name: storage.CapBackgroundLeaders, On: true, Detail: "archive purge, webhook dispatch and change-log pruning run on one engine at a time, chosen by advisory lock"},
		{Name: storage.CapIndexFromChangeLog, On: true, Detail: "each engine keeps its keyword index in memory, fed by the change table"},
		s.webhookKeyCapability(),
	}
}

var _ storage.Capabilities = (*Store)(nil)
