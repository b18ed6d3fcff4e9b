package pgstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/termstats"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Reads answered by the in-memory index, as boltstore answers them.

// corpus is what the Corpus API is answered from (termstats, shared with
// boltstore so the answers cannot drift).
func (s *Store) corpus(ctx context.Context) termstats.Source {
	return termstats.Source{
		An: s.an, Idx: s.idx, Now: s.nowNanos(),
		DocFreqs: termstats.CallerDocFreqs(s.idx, authz.Of(ctx)),
		Filter:   func(f *aimemoryv1.Filter) (*index.Filter, error) { return s.filter(ctx, f) },
		Records:  func(hits []index.Hit) ([]*aimemoryv1.Memory, error) { return s.records(ctx, hits) },
	}
}

// TermStats: the text's terms with their document frequencies, and on
// request the existing tags (of memories the caller may read) it spells out.
func (s *Store) TermStats(ctx context.Context, req *aimemoryv1.TermStatsRequest) (*aimemoryv1.TermStatsResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	return termstats.AnswerTermStats(s.corpus(ctx), req)
}

// RelatedTerms mines the best recall matches of the query for co-occurring terms.
func (s *Store) RelatedTerms(ctx context.Context, req *aimemoryv1.RelatedTermsRequest) (*aimemoryv1.RelatedTermsResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	return termstats.AnswerRelatedTerms(s.corpus(ctx), req)
}

// CountNamespaces counts live memories per namespace under a prefix.
func (s *Store) CountNamespaces(ctx context.Context, req *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error) {
	if err := s.catchUp(ctx); err != nil { // see the other engines' writes
		return nil, err
	}
	return ops.CountNamespaces(ctx, s.idx, s.nowNanos(), req)
}
