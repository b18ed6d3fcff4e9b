package server

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// maxAuditList caps one ListAudit answer.
const maxAuditList = 10000

// Audit serves the hash-chained audit log.
type Audit struct {
	aimemoryv1.UnimplementedAuditServer
	errorMapper
	st storage.Audit
}

func (s *Audit) AppendAudit(ctx context.Context, req *aimemoryv1.AppendAuditRequest) (*aimemoryv1.AppendAuditResponse, error) {
	// Only hosts write the audit log: a plugin (or anything else holding a
	// tool call's assertion) could otherwise forge the record of a decision.
	if c, ok := caller.FromContext(ctx); !ok || !c.IsHost() {
		return nil, status.Error(codes.PermissionDenied, "audit records are appended by ai-memory hosts only")
	}
	if req.GetRecord() == nil {
		return nil, status.Error(codes.InvalidArgument, "record: is required")
	}
	r, err := s.st.AppendAudit(ctx, req.GetRecord())
	if err != nil {
		return nil, s.status(err)
	}
	return &aimemoryv1.AppendAuditResponse{Record: r}, nil
}

// everyPrincipal refuses a caller without the grant of every namespace:
// the audit log records every tenant's principals and decisions.
func everyPrincipal(ctx context.Context) error {
	if !authz.Of(ctx).Everything() {
		return status.Error(codes.PermissionDenied, "the audit log names every principal: reading it needs the grant of every namespace (ai-memory audit)")
	}
	return nil
}

func (s *Audit) ListAudit(ctx context.Context, req *aimemoryv1.ListAuditRequest) (*aimemoryv1.ListAuditResponse, error) {
	if err := everyPrincipal(ctx); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > maxAuditList {
		return nil, status.Errorf(codes.InvalidArgument, "limit: must be from 1 to %d", maxAuditList)
	}
	rs, err := s.st.ListAudit(ctx, req.GetAgentId(), limit)
	if err != nil {
		return nil, s.status(err)
	}
	return &aimemoryv1.ListAuditResponse{Records: rs}, nil
}

func (s *Audit) VerifyAudit(ctx context.Context, _ *aimemoryv1.VerifyAuditRequest) (*aimemoryv1.VerifyAuditResponse, error) {
	if err := everyPrincipal(ctx); err != nil {
		return nil, err
	}
	v, err := s.st.VerifyAudit(ctx)
	return v, s.status(err)
}
