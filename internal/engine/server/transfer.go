package server

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// maxImportBatch bounds one Import request's records.
const maxImportBatch = 10000

// Transfer serves Export and Import, for hosts only: a plugin reaches
// memory through the record APIs and their checks.
type Transfer struct {
	aimemoryv1.UnimplementedTransferServer
	st storage.Backend
	errorMapper
}

func hostOnly(ctx context.Context, what string) error {
	if c, ok := caller.FromContext(ctx); !ok || !c.IsHost() {
		return status.Error(codes.PermissionDenied, what+": only a host (the ai-memory CLI) may "+what)
	}
	return nil
}

func (s *Transfer) Export(_ *aimemoryv1.ExportRequest, stream grpc.ServerStreamingServer[aimemoryv1.ExportRecord]) error {
	if err := hostOnly(stream.Context(), "export"); err != nil {
		return err
	}
	return s.status(s.st.Export(stream.Context(), stream.Send))
}

func (s *Transfer) Import(ctx context.Context, req *aimemoryv1.ImportRequest) (*aimemoryv1.ImportResponse, error) {
	if err := hostOnly(ctx, "import"); err != nil {
		return nil, err
	}
	if n := len(req.GetRecords()); n > maxImportBatch {
		return nil, status.Errorf(codes.InvalidArgument, "records: at most %d per request (got %d)", maxImportBatch, n)
	}
	results, err := s.st.Import(ctx, req.GetRecords())
	if err != nil {
		return nil, s.status(err)
	}
	return &aimemoryv1.ImportResponse{Results: results}, nil
}
