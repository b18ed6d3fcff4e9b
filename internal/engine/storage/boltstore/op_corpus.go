package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/termstats"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// corpus is what the Corpus API is answered from (termstats, shared by
// every backend so their answers cannot drift).
func (s *Store) corpus(ctx context.Context) termstats.Source {
	return termstats.Source{
		An: s.an, Idx: s.idx, Now: s.nowNanos(),
		DocFreqs: termstats.CallerDocFreqs(s.idx, authz.Of(ctx)),
		Filter:   func(f *aimemoryv1.Filter) (*index.Filter, error) { return s.filter(ctx, f) },
		Records:  s.records,
	}
}

// TermStats: the text's terms with their document frequencies, and on
// request the existing tags (of memories the caller may read) the text
// spells out.
func (s *Store) TermStats(ctx context.Context, req *aimemoryv1.TermStatsRequest) (*aimemoryv1.TermStatsResponse, error) {
	return termstats.AnswerTermStats(s.corpus(ctx), req)
}

// RelatedTerms mines the best recall matches of the query for co-occurring terms.
func (s *Store) RelatedTerms(ctx context.Context, req *aimemoryv1.RelatedTermsRequest) (*aimemoryv1.RelatedTermsResponse, error) {
	return termstats.AnswerRelatedTerms(s.corpus(ctx), req)
}
