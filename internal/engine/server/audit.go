package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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

func (s *Audit) ListAudit(ctx context.Context, req *aimemoryv1.ListAuditRequest) (*aimemoryv1.ListAuditResponse, error) {
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
