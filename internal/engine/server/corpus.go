package server

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Corpus serves the keyword index's statistics.
type Corpus struct {
	aimemoryv1.UnimplementedCorpusServer
	errorMapper
	st storage.Corpus
}

func (s *Corpus) TermStats(ctx context.Context, req *aimemoryv1.TermStatsRequest) (*aimemoryv1.TermStatsResponse, error) {
	resp, err := s.st.TermStats(ctx, req)
	return resp, s.status(err)
}

func (s *Corpus) RelatedTerms(ctx context.Context, req *aimemoryv1.RelatedTermsRequest) (*aimemoryv1.RelatedTermsResponse, error) {
	resp, err := s.st.RelatedTerms(ctx, req)
	return resp, s.status(err)
}
