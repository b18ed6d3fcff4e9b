package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Vectors live in table vectors (id → model, hash of the text embedded,
// the unit vector 8-bit: scale and bytea q, as vecset.Entry), written only while the memory still has the text
// embedded, and gone with the memory (cascade) or with an edit of its
// title or content (put). Each engine keeps a copy in memory (vecset, as
// boltstore), loaded with the index in one snapshot and caught up from the
// change log with it: a PutVectors logs the memory as a change (no
// reindex), and a catch-up re-reads the vector rows of such changes
// (syncVectors), so every engine sees every engine's vectors. Nearest is
// vecset's exact scan, boltstore's answer, unless pgvector is on
// (pgvector.go).

// freshTimeout bounds the catch-up of the context-free reads (HasVector,
// VectorStatus).
const freshTimeout = 2 * time.Second

// freshen catches up for a read that has no context; a failure leaves the
// read on what this engine has (logged).
func (s *Store) freshen() {
	ctx, cancel := context.WithTimeout(context.Background(), freshTimeout)
	defer cancel()
	if err := s.catchUp(ctx); err != nil {
		s.log.Warn("vector read without a catch-up", "err", err)
	}
}

// loadVectors reads every stored vector (in the index's snapshot, tx).
func loadVectors(ctx context.Context, tx pgx.Tx) (*vecset.Set, error) {
	set := vecset.New()
	rows, err := tx.Query(ctx, `SELECT id, model, hash, scale, q FROM vectors`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		id, e, err := scanVector(rows)
		if err != nil {
			return nil, err
		}
		set.Put(id, e)
	}
	return set, rows.Err()
}

func scanVector(rows pgx.Rows) (string, *vecset.Entry, error) {
	var (
		id   string
		hash int64
		e    vecset.Entry
		q    []byte
	)
	if err := rows.Scan(&id, &e.Model, &hash, &e.Scale, &q); err != nil {
		return "", nil, err
	}
	e.Hash, e.Q = uint64(hash), vecset.Bytes8(q)
	return id, &e, nil
}

// vectorsOf reads, for a catch-up's changes, the vector rows a change may
// have written: one with no reindex may be a PutVectors, so those ids'
// rows are read as committed now (a newer state is as good: the rows are
// the truth, and later changes are applied on top). An id in the answer
// without an entry has no vector.
func (s *Store) vectorsOf(ctx context.Context, changes []index.Change) (map[string]*vecset.Entry, error) {
	var ids []string
	for _, c := range changes {
		if c.Memory != nil && !c.Reindex {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	out := make(map[string]*vecset.Entry, len(ids))
	for _, id := range ids {
		out[id] = nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id, model, hash, scale, q FROM vectors WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		id, e, err := scanVector(rows)
		if err != nil {
			return nil, err
		}
		out[id] = e
	}
	return out, rows.Err()
}

// syncVectors brings the vector copy to the changes a catch-up applies
// (under syncMu), with the rows vectorsOf read: a deleted memory's vector
// goes, and so does one of text its memory no longer has.
func (s *Store) syncVectors(changes []index.Change, rows map[string]*vecset.Entry) {
	for _, c := range changes {
		if c.Memory == nil {
			s.vecs.Put(c.ID, nil)
			continue
		}
		if e := s.vecs.Get(c.ID); e != nil && e.Hash != vecset.TextHash(c.Memory) {
			s.vecs.Put(c.ID, nil)
		}
	}
	for id, e := range rows {
		s.vecs.Put(id, e)
	}
}

// dropVector removes id's vector in the write's transaction (its title or
// content changed); the change logged with it drops the copies.
func (w *writeTx) dropVector(id string) error {
	_, err := w.tx.Exec(w.ctx, `DELETE FROM vectors WHERE id = $1`, id)
	return err
}

// PutVectors stores embeddings by model in one transaction, each only if
// its memory still has the text that was embedded (a later edit's own
// embedding will follow). The memory's row is locked, so the change
// logged for it keeps its place among the memory's changes.
func (s *Store) PutVectors(ctx context.Context, model string, puts []storage.VectorPut) (stored int, err error) {
	es, err := vecset.Entries(model, puts)
	if err != nil {
		return 0, err
	}
	pgv := s.pgvectorOn()
	err = s.write(ctx, func(w *writeTx) error {
		stored = 0
		for i, p := range puts {
			var raw []byte
			err := w.tx.QueryRow(w.ctx, `SELECT record FROM memories WHERE id = $1 FOR UPDATE`, p.ID).Scan(&raw)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			m, err := decodeMemory(raw)
			if err != nil {
				return err
			}
			if vecset.TextHash(m) != es[i].Hash {
				continue
			}
			if err := w.putVector(p.ID, es[i], pgv); err != nil {
				return err
			}
			if err := w.logChange(index.Change{ID: p.ID, Memory: m}, raw); err != nil {
				return err
			}
			stored++
		}
		return nil
	})
	if err == nil && pgv {
		s.ensureVectorIndex(ctx, puts)
	}
	return stored, err
}

func (w *writeTx) putVector(id string, e *vecset.Entry, pgv bool) error {
	q := `INSERT INTO vectors (id, model, hash, scale, q) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET model = EXCLUDED.model, hash = EXCLUDED.hash, scale = EXCLUDED.scale, q = EXCLUDED.q`
	args := []any{id, e.Model, int64(e.Hash), e.Scale, vecset.Raw8(e.Q)}
	if pgv {
		q, args = pgvectorPut, append(args, e.Vector())
	}
	_, err := w.tx.Exec(w.ctx, q, args...)
	return err
}

// HasVector reports whether id has a vector by model.
func (s *Store) HasVector(id, model string) bool {
	s.freshen()
	return s.vecs.Has(id, model)
}

// VectorStatus counts live memories, those with a vector by model, and
// vectors of other models (a model change: they need a reindex).
func (s *Store) VectorStatus(model string) (memories, current, other int) {
	s.freshen()
	ids := s.idx.IDs()
	current, other = s.vecs.Status(ids, model)
	return len(ids), current, other
}

// MissingVectors lists up to limit memories (by id order) with no vector
// by model, after the id after (a reindex's resume point).
func (s *Store) MissingVectors(ctx context.Context, model, after string, limit int) ([]*aimemoryv1.Memory, error) {
	if err := s.catchUp(ctx); err != nil {
		return nil, err
	}
	return s.records(ctx, s.vecs.Missing(s.idx.IDs(), model, after, limit))
}

// Nearest is the limit live memories matching the filter closest to v by
// model's vectors (score: cosine).
func (s *Store) Nearest(ctx context.Context, filter *aimemoryv1.Filter, v []float32, model string, limit int) ([]*aimemoryv1.ScoredMemory, error) {
	if err := s.catchUp(ctx); err != nil {
		return nil, err
	}
	f, err := s.filter(ctx, filter)
	if err != nil {
		return nil, err
	}
	hits, err := s.nearest(ctx, f, v, model, limit, -1)
	if err != nil {
		return nil, err
	}
	return s.scored(ctx, hits)
}

// nearest is the limit live memories matching f whose vectors by model are
// closest to q (cosine), best first, with cosine at least minCos: by the
// pgvector index when it is on, else by boltstore's exact scan.
func (s *Store) nearest(ctx context.Context, f *index.Filter, q []float32, model string, limit int, minCos float64) ([]index.Hit, error) {
	if s.pgvectorOn() {
		return s.nearestPgvector(ctx, f, q, model, limit, minCos)
	}
	return s.vecs.Nearest(s.idx, f, q, model, limit, minCos, s.nowNanos()), nil
}

// scored reads hits' memories, each with its hit's score, skipping any
// deleted since the index was read.
func (s *Store) scored(ctx context.Context, hits []index.Hit) ([]*aimemoryv1.ScoredMemory, error) {
	mems, err := s.records(ctx, hits)
	if err != nil {
		return nil, err
	}
	out := make([]*aimemoryv1.ScoredMemory, 0, len(mems))
	j := 0
	for _, m := range mems {
		for hits[j].ID != m.Id {
			j++
		}
		out = append(out, &aimemoryv1.ScoredMemory{Memory: m, Score: hits[j].Score})
		j++
	}
	return out, nil
}

// checkVectors: every vector row is of its memory's current text and in
// this engine's copy, and the copy holds no other (CheckConsistency).
func (s *Store) checkVectors(ctx context.Context, records map[string]*aimemoryv1.Memory) error {
	rows, err := s.pool.Query(ctx, `SELECT id, model, hash, scale, q FROM vectors`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []error
	stored := 0
	for rows.Next() {
		id, e, err := scanVector(rows)
		if err != nil {
			return err
		}
		stored++
		switch m := records[id]; {
		case m == nil:
			problems = append(problems, fmt.Errorf("vector %s of a missing memory", id))
		case vecset.TextHash(m) != e.Hash:
			problems = append(problems, fmt.Errorf("vector %s is of text the memory no longer has", id))
		case !s.vecs.Has(id, e.Model):
			problems = append(problems, fmt.Errorf("vector %s is not in memory", id))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n := s.vecs.Len(); n != stored {
		problems = append(problems, fmt.Errorf("%d vectors in memory, %d stored", n, stored))
	}
	return errors.Join(problems...)
}
