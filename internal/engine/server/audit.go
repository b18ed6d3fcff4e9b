package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// maxAuditList caps one ListAudit answer.
const maxAuditList = 10000

// Audit serves the keyed, hash-chained audit log (audit.Log: the
// backend's chain and this engine's pin).
type Audit struct {
	aimemoryv1.UnimplementedAuditServer
	errorMapper
	log *audit.Log
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
	if req.GetRecord().GetEvent() == audit.EventKeyed {
		return nil, status.Error(codes.InvalidArgument, "event: "+audit.EventKeyed+" is written by the engine only")
	}
	r, err := s.log.Append(ctx, req.GetRecord())
	if err != nil {
		return nil, s.auditStatus(err)
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
	rs, err := s.log.List(ctx, req.GetAgentId(), limit)
	if err != nil {
		return nil, s.status(err)
	}
	return &aimemoryv1.ListAuditResponse{Records: rs}, nil
}

func (s *Audit) VerifyAudit(ctx context.Context, _ *aimemoryv1.VerifyAuditRequest) (*aimemoryv1.VerifyAuditResponse, error) {
	if err := everyPrincipal(ctx); err != nil {
		return nil, err
	}
	v, err := s.log.Verify(ctx)
	return v, s.status(err)
}

// auditStatus: a log whose last record the key does not verify takes no
// append (audit.HeadError), which is a precondition, not an internal error.
func (s *Audit) auditStatus(err error) error {
	var he *audit.HeadError
	if errors.As(err, &he) {
		return status.Error(codes.FailedPrecondition, he.Error())
	}
	return s.status(err)
}
