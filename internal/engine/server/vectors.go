package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/embedder"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Vectors serves the embeddings and their endpoint's status.
type Vectors struct {
	aimemoryv1.UnimplementedVectorsServer
	errorMapper
	st  storage.Vectors
	emb *embedder.Embedder // nil: none configured
}

// VectorStatus is the endpoint's state; its counts are the whole store's,
// so only a grant of every namespace is shown them.
func (s *Vectors) VectorStatus(ctx context.Context, _ *aimemoryv1.VectorStatusRequest) (*aimemoryv1.VectorStatusResponse, error) {
	st := s.emb.Status()
	if !authz.Of(ctx).Everything() {
		st.Memories, st.WithVector, st.OtherModel, st.Queued, st.Withheld = 0, 0, 0, 0, 0
	}
	return st, nil
}

// Backfill embeds memories of every namespace: an operator's command.
func (s *Vectors) Backfill(ctx context.Context, req *aimemoryv1.BackfillRequest) (*aimemoryv1.BackfillResponse, error) {
	if !authz.Of(ctx).Everything() {
		return nil, status.Error(codes.PermissionDenied, "backfill embeds every namespace's memories: it needs the grant of every namespace (ai-memory reindex)")
	}
	batch := int(req.GetBatch())
	switch {
	case batch == 0:
		batch = 16
	case batch > 256:
		return nil, status.Errorf(codes.InvalidArgument, "batch: must be at most 256 (got %d)", batch)
	}
	resp, err := s.emb.Backfill(ctx, batch, req.GetAfter())
	switch {
	case errors.Is(err, embedder.ErrNotConfigured):
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, embedder.ErrUnavailable):
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return resp, s.status(err)
}

func (s *Vectors) NearestByText(ctx context.Context, req *aimemoryv1.NearestByTextRequest) (*aimemoryv1.NearestByTextResponse, error) {
	limit := int(req.GetLimit())
	if limit <= 0 || limit > 1000 {
		return nil, status.Errorf(codes.InvalidArgument, "limit: must be from 1 to 1000 (got %d)", limit)
	}
	if s.emb == nil {
		return &aimemoryv1.NearestByTextResponse{}, nil
	}
	resp := &aimemoryv1.NearestByTextResponse{Configured: true, DuplicateThreshold: s.emb.DuplicateThreshold()}
	v, model, reason := s.emb.EmbedQuery(ctx, req.GetText())
	if reason != "" {
		resp.Reason = reason
		return resp, nil
	}
	res, err := s.st.Nearest(ctx, req.GetFilter(), v, model, limit)
	if err != nil {
		return nil, s.status(err)
	}
	resp.Results, resp.Model = res, model
	if len(res) == 0 {
		resp.Reason = "no memory has a vector by " + model + " yet"
	}
	return resp, nil
}

// semantic is a hybrid search's query vector (nil: keyword only), with
// why there is none when the request asked for one.
func semantic(ctx context.Context, emb *embedder.Embedder, req *aimemoryv1.SearchMemoriesRequest) (*storage.Hybrid, string) {
	if !req.GetSemantic() || emb == nil {
		return nil, "" // keyword is the configured method: nothing to explain
	}
	v, model, reason := emb.EmbedQuery(ctx, req.GetQuery())
	if reason != "" {
		return nil, reason
	}
	return &storage.Hybrid{Vector: v, Model: model, MinSimilarity: emb.MinSimilarity(), Unread: emb.UnreadShare(req.GetQuery())}, ""
}
