package server

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/embedder"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Memories serves the memory records and their keyword index.
type Memories struct {
	aimemoryv1.UnimplementedMemoriesServer
	errorMapper
	st  storage.Memories
	emb *embedder.Embedder // nil: none configured
}

func (s *Memories) StoreMemory(ctx context.Context, req *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error) {
	resp, err := s.st.StoreMemory(ctx, req)
	return resp, s.status(err)
}

func (s *Memories) GetMemories(ctx context.Context, req *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error) {
	resp, err := s.st.GetMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Memories) ShortIds(ctx context.Context, req *aimemoryv1.ShortIdsRequest) (*aimemoryv1.ShortIdsResponse, error) {
	resp, err := s.st.ShortIDs(ctx, req)
	return resp, s.status(err)
}

func (s *Memories) ListMemories(ctx context.Context, req *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error) {
	resp, err := s.st.ListMemories(ctx, req)
	if err == nil && req.GetShortIdLength() > 0 {
		ids := make([]string, len(resp.GetMemories()))
		for i, m := range resp.GetMemories() {
			ids[i] = m.GetId()
		}
		resp.ShortIds, err = s.shortIDs(ctx, ids, req.GetShortIdLength())
	}
	return resp, s.status(err)
}

func (s *Memories) SearchMemories(ctx context.Context, req *aimemoryv1.SearchMemoriesRequest) (*aimemoryv1.SearchMemoriesResponse, error) {
	hy, reason := semantic(ctx, s.emb, req)
	resp, err := s.st.SearchMemories(ctx, req, hy)
	if err == nil && reason != "" {
		resp.SemanticReason = reason
	}
	if err == nil && req.GetShortIdLength() > 0 {
		ids := make([]string, len(resp.GetResults()))
		for i, r := range resp.GetResults() {
			ids[i] = r.GetMemory().GetId()
		}
		resp.ShortIds, err = s.shortIDs(ctx, ids, req.GetShortIdLength())
	}
	return resp, s.status(err)
}

// shortIDs is ShortIds for a result's ids, answered with the result itself
// so a compact listing costs one engine round trip, not two.
func (s *Memories) shortIDs(ctx context.Context, ids []string, minLength uint32) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	resp, err := s.st.ShortIDs(ctx, &aimemoryv1.ShortIdsRequest{Ids: ids, MinLength: minLength})
	return resp.GetPrefixes(), err
}

func (s *Memories) TouchMemories(ctx context.Context, req *aimemoryv1.TouchMemoriesRequest) (*aimemoryv1.TouchMemoriesResponse, error) {
	resp, err := s.st.TouchMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Memories) UpdateMemory(ctx context.Context, req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.UpdateMemoryResponse, error) {
	resp, err := s.st.UpdateMemory(ctx, req)
	return resp, s.status(err)
}

func (s *Memories) DeleteMemories(ctx context.Context, req *aimemoryv1.DeleteMemoriesRequest) (*aimemoryv1.DeleteMemoriesResponse, error) {
	resp, err := s.st.DeleteMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Memories) CollectGarbage(ctx context.Context, req *aimemoryv1.CollectGarbageRequest) (*aimemoryv1.CollectGarbageResponse, error) {
	resp, err := s.st.CollectGarbage(ctx, req)
	return resp, s.status(err)
}

func (s *Memories) Stats(ctx context.Context, _ *aimemoryv1.StatsRequest) (*aimemoryv1.StatsResponse, error) {
	resp, err := s.st.Stats(ctx)
	return resp, s.status(err)
}
