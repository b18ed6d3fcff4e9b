package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The Memories interface, rule for rule as boltstore's (the conformance
// suite and the differential test hold both to it): validation and the
// record rules come from package rules, ranking from package index.

// Hybrid search's default floor, boltstore's.
var defaultMinSimilarity = vecset.DefaultMinSimilarity

// filter compiles a request's filter with the read rules of the guarded
// namespaces and the caller's scope (boltstore's filter).
func (s *Store) filter(ctx context.Context, in *aimemoryv1.Filter) (*index.Filter, error) {
	return ops.ReadFilter(ctx, in)
}

// records reads the memories of hits in order, skipping any deleted since
// the index was read.
func (s *Store) records(ctx context.Context, hits []index.Hit) ([]*aimemoryv1.Memory, error) {
	if len(hits) == 0 {
		return []*aimemoryv1.Memory{}, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	rows, err := s.pool.Query(ctx, `SELECT id, record FROM memories WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[string]*aimemoryv1.Memory, len(ids))
	for rows.Next() {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		m, err := decodeMemory(raw)
		if err != nil {
			return nil, fmt.Errorf("memory %s: %w", id, err)
		}
		byID[id] = m
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*aimemoryv1.Memory, 0, len(hits))
	for _, id := range ids {
		if m := byID[id]; m != nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// ListMemories returns live memories matching the filter, priority desc,
// then updated_at desc, then id.
func (s *Store) ListMemories(ctx context.Context, req *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	f, err := s.filter(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return ops.List(s.idx, f, s.nowNanos(), req, func(hits []index.Hit) ([]*aimemoryv1.Memory, error) { return s.records(ctx, hits) })
}

// SearchMemories ranks live memories matching the filter by keyword
// relevance (index/rank.go), as boltstore does; with a query vector and
// model, fused with the nearest vectors (hybrid), as boltstore does.
func (s *Store) SearchMemories(ctx context.Context, req *aimemoryv1.SearchMemoriesRequest, hy *storage.Hybrid) (*aimemoryv1.SearchMemoriesResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	f, err := s.filter(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	q, err := ops.KeywordQuery(s.an, req, f, s.nowNanos())
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	resp := &aimemoryv1.SearchMemoriesResponse{Mode: "keyword"}
	hybrid := hy != nil && len(hy.Vector) > 0 && hy.Model != ""
	if hybrid {
		q.Limit = max(3*limit, 30)
	}
	hits := s.idx.Search(q)
	if hybrid { // boltstore's blend, step for step
		minCos := hy.MinSimilarity
		if minCos == 0 {
			minCos = defaultMinSimilarity
		}
		near, err := s.nearest(ctx, f, hy.Vector, hy.Model, max(5*limit, 50), minCos)
		if err != nil {
			return nil, err
		}
		if len(near) == 0 {
			resp.SemanticReason = "no memory has a vector by " + hy.Model + " close to the query"
			hits = hits[:min(len(hits), limit)]
		} else {
			hits = s.vecs.Blend(hits, s.idx.QueryWeight(q.Terms), near, hy.Vector, hy.Model, minCos, hy.Unread, limit)
			resp.Mode = "hybrid"
		}
	}
	if resp.Results, err = s.scored(ctx, hits); err != nil {
		return nil, err
	}
	return resp, nil
}

// HasExpired reports whether any memory has expired: one index probe.
func (s *Store) HasExpired(ctx context.Context) (bool, error) {
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM memories WHERE expires_at <> 0 AND expires_at <= $1)`, s.nowNanos()).Scan(&found)
	return found, err
}

// Expired reads the expired rows, soonest first (seam.Tx).
func (t opsTx) Expired() ([]*aimemoryv1.Memory, error) {
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT record FROM memories WHERE expires_at <> 0 AND expires_at <= $1 ORDER BY expires_at, id`, t.w.now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*aimemoryv1.Memory, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		return decodeMemory(raw)
	})
}

// Stats counts stored memories by tier and namespace (from the index),
// the index's size, live links, archive rows and versions, and the
// database's size.
func (s *Store) Stats(ctx context.Context) (*aimemoryv1.StatsResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	resp, wide := ops.IndexStats(ctx, s.idx, s.nowNanos())
	if !wide { // store-wide counts are only for a grant of every namespace
		return resp, nil
	}
	// Sizes are of this backend's own rows (the archive's: its records).
	var stored, archived, versions, archiveBytes, links int64
	err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM archived), (SELECT count(*) FROM versions),
		(SELECT count(*) FROM links),
		(SELECT coalesce(sum(octet_length(record)), 0) FROM archived) + (SELECT coalesce(sum(octet_length(record)), 0) FROM versions),
		pg_database_size(current_database())`).Scan(&stored, &archived, &versions, &links, &archiveBytes, &resp.DbSizeBytes)
	if err != nil {
		return nil, err
	}
	resp.Stored, resp.Archived, resp.Versions, resp.ArchiveSizeBytes = uint64(stored), uint64(archived), uint64(versions), uint64(archiveBytes)
	resp.Links = uint64(links)
	return resp, nil
}
