package server

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Archive serves the lifecycle writes that go through the archive
// (plugins/admin: forget, promote) and the engine-level restore and read.
type Archive struct {
	aimemoryv1.UnimplementedArchiveServer
	errorMapper
	st storage.Archive
}

func (s *Archive) Forget(ctx context.Context, req *aimemoryv1.ForgetRequest) (*aimemoryv1.ForgetResponse, error) {
	resp, err := s.st.Forget(ctx, req)
	return resp, s.status(err)
}

func (s *Archive) PromoteMemory(ctx context.Context, req *aimemoryv1.PromoteMemoryRequest) (*aimemoryv1.PromoteMemoryResponse, error) {
	resp, err := s.st.PromoteMemory(ctx, req)
	return resp, s.status(err)
}

func (s *Archive) RestoreMemory(ctx context.Context, req *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error) {
	resp, err := s.st.RestoreMemory(ctx, req)
	return resp, s.status(err)
}

func (s *Archive) GetArchived(ctx context.Context, req *aimemoryv1.GetArchivedRequest) (*aimemoryv1.GetArchivedResponse, error) {
	resp, err := s.st.GetArchived(ctx, req)
	return resp, s.status(err)
}

func (s *Archive) Consolidate(ctx context.Context, req *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error) {
	resp, err := s.st.Consolidate(ctx, req)
	return resp, s.status(err)
}

func (s *Archive) ListArchived(ctx context.Context, req *aimemoryv1.ListArchivedRequest) (*aimemoryv1.ListArchivedResponse, error) {
	resp, err := s.st.ListArchived(ctx, req)
	return resp, s.status(err)
}

func (s *Archive) PurgeArchive(ctx context.Context, req *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, error) {
	resp, err := s.st.PurgeArchive(ctx, req)
	return resp, s.status(err)
}

func (s *Archive) ArchiveStats(ctx context.Context, _ *aimemoryv1.ArchiveStatsRequest) (*aimemoryv1.ArchiveStatsResponse, error) {
	resp, err := s.st.ArchiveStats(ctx)
	return resp, s.status(err)
}
