package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Hybrid recall (docs/RETRIEVAL.md): the keyword and vector lists are
// blended (vecset.Blend), with vector candidates below the engine's
// min_similarity (storage.Hybrid; default 0.5) left out.
var defaultMinSimilarity = vecset.DefaultMinSimilarity

// filter compiles a request's filter with the read rule of the guarded
// namespaces: another identity's inbox, or another family's keyspace, is
// never returned.
func (s *Store) filter(ctx context.Context, in *aimemoryv1.Filter) (*index.Filter, error) {
	return ops.ReadFilter(ctx, in)
}

// ListMemories returns live memories matching the filter, priority desc,
// then updated_at desc, then id (and with_recent, the most recently
// updated from the same scan). A limit of 0 returns none: callers send
// their default.
func (s *Store) ListMemories(ctx context.Context, req *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error) {
	f, err := s.filter(ctx, req.GetFilter())
	if err != nil {
		return nil, err
	}
	return ops.List(s.idx, f, s.nowNanos(), req, s.records)
}

// Nearest is the limit live memories matching the filter closest to v by
// model's vectors (score: cosine).
func (s *Store) Nearest(ctx context.Context, filter *aimemoryv1.Filter, v []float32, model string, limit int) ([]*aimemoryv1.ScoredMemory, error) {
	f, err := s.filter(ctx, filter)
	if err != nil {
		return nil, err
	}
	hits := s.nearest(f, v, model, limit, -1)
	mems, err := s.records(hits)
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

// SearchMemories ranks live memories matching the filter by keyword
// relevance first (index/rank.go). MATCH_MODE_ALL (the default) needs
// every query term; ANY (recall) at least one, and drops function words
// from a query that has other words. A query with no usable word matches
// nothing.
func (s *Store) SearchMemories(ctx context.Context, req *aimemoryv1.SearchMemoriesRequest, hy *storage.Hybrid) (*aimemoryv1.SearchMemoriesResponse, error) {
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
	if hybrid {
		minCos := hy.MinSimilarity
		if minCos == 0 {
			minCos = defaultMinSimilarity
		}
		near := s.nearest(f, hy.Vector, hy.Model, max(5*limit, 50), minCos)
		if len(near) == 0 {
			resp.SemanticReason = "no memory has a vector by " + hy.Model + " close to the query"
			hits = hits[:min(len(hits), limit)]
		} else {
			hits = s.vecs.Blend(hits, s.idx.QueryWeight(q.Terms), near, hy.Vector, hy.Model, minCos, hy.Unread, limit)
			resp.Mode = "hybrid"
		}
	}
	mems, err := s.records(hits)
	if err != nil {
		return nil, err
	}
	resp.Results = make([]*aimemoryv1.ScoredMemory, 0, len(mems))
	j := 0
	for _, m := range mems {
		for hits[j].ID != m.Id {
			j++ // skip hits deleted since the index was read
		}
		resp.Results = append(resp.Results, &aimemoryv1.ScoredMemory{Memory: m, Score: hits[j].Score})
		j++
	}
	return resp, nil
}

// records reads the memories of hits in order, skipping any deleted since
// the index was read.
func (s *Store) records(hits []index.Hit) ([]*aimemoryv1.Memory, error) {
	out := make([]*aimemoryv1.Memory, 0, len(hits))
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMemories)
		for _, h := range hits {
			raw := b.Get([]byte(h.ID))
			if raw == nil {
				continue
			}
			m, err := decodeLive(raw)
			if err != nil {
				return fmt.Errorf("memory %s: %w", h.ID, err)
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}
