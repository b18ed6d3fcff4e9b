package server

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Governance serves namespace standards, pending actions and the agent
// registry's storage. The policy itself is enforced by the backend inside
// every write, whichever service the write came through.
type Governance struct {
	aimemoryv1.UnimplementedGovernanceServer
	errorMapper
	st storage.Governance
}

func (s *Governance) SetStandard(ctx context.Context, req *aimemoryv1.SetStandardRequest) (*aimemoryv1.SetStandardResponse, error) {
	resp, err := s.st.SetStandard(ctx, req)
	return resp, s.status(err)
}

func (s *Governance) GetStandard(ctx context.Context, req *aimemoryv1.GetStandardRequest) (*aimemoryv1.GetStandardResponse, error) {
	resp, err := s.st.GetStandard(ctx, req)
	return resp, s.status(err)
}

func (s *Governance) ClearStandard(ctx context.Context, req *aimemoryv1.ClearStandardRequest) (*aimemoryv1.ClearStandardResponse, error) {
	resp, err := s.st.ClearStandard(ctx, req)
	return resp, s.status(err)
}

func (s *Governance) ListPending(ctx context.Context, req *aimemoryv1.ListPendingRequest) (*aimemoryv1.ListPendingResponse, error) {
	resp, err := s.st.ListPending(ctx, req)
	return resp, s.status(err)
}

func (s *Governance) ApprovePending(ctx context.Context, req *aimemoryv1.DecidePendingRequest) (*aimemoryv1.ApprovePendingResponse, error) {
	resp, err := s.st.ApprovePending(ctx, req)
	return resp, s.status(err)
}

func (s *Governance) RejectPending(ctx context.Context, req *aimemoryv1.DecidePendingRequest) (*aimemoryv1.RejectPendingResponse, error) {
	resp, err := s.st.RejectPending(ctx, req)
	return resp, s.status(err)
}

func (s *Governance) RegisterAgent(ctx context.Context, req *aimemoryv1.RegisterAgentRequest) (*aimemoryv1.RegisterAgentResponse, error) {
	resp, err := s.st.RegisterAgent(ctx, req)
	return resp, s.status(err)
}

// pendingStatus is a queued write's status: Aborted, with the pending
// action's id, namespace and approver as a PendingAction detail, so a
// plugin can answer {status: pending, pending_id} rather than an error.
func pendingStatus(err error) (error, bool) {
	var pe *storage.PendingError
	if !errors.As(err, &pe) || pe.ID == "" {
		return nil, false
	}
	st, derr := status.New(codes.Aborted, err.Error()).WithDetails(&aimemoryv1.PendingAction{
		Id: pe.ID, Action: string(pe.Op), Namespace: pe.Namespace, Approver: pe.Approver, Reason: pe.Reason, Status: "pending",
	})
	if derr != nil {
		return status.Error(codes.Aborted, err.Error()), true
	}
	return st.Err(), true
}

func (s *Governance) ListAgents(ctx context.Context, req *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error) {
	resp, err := s.st.ListAgents(ctx, req)
	return resp, s.status(err)
}
