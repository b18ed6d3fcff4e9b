package records

import (
	"context"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Namespace standards. The policy lives in the standards row, not in the
// standard memory's metadata: a memory_update of that memory (which its
// own namespace's policy governs) cannot rewrite it, and deleting or
// collecting the memory cannot lift it. Only the namespace's owner or an
// operator sets or clears the row. Every write reads it inside its
// transaction, so on a database several engines share a policy set on one
// governs the next write on any other.

// SetStandard pins a memory as ns's standard, with its policy (ops.SetStandard).
func (s *Store) SetStandard(ctx context.Context, req *aimemoryv1.SetStandardRequest) (*aimemoryv1.SetStandardResponse, error) {
	policy, err := ops.SetStandardPolicy(req)
	if err != nil {
		return nil, err
	}
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.SetStandardResponse, error) { return ops.SetStandard(t, req, policy) })
}

// ClearStandard removes ns's standard row and with it the policy.
func (s *Store) ClearStandard(ctx context.Context, req *aimemoryv1.ClearStandardRequest) (*aimemoryv1.ClearStandardResponse, error) {
	ns := req.GetNamespace()
	if err := ops.ValidStandardNamespace("namespace", ns); err != nil {
		return nil, err
	}
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.ClearStandardResponse, error) {
		row, err := t.View().Standard(ns)
		if err != nil || row == nil {
			return &aimemoryv1.ClearStandardResponse{}, err
		}
		if err := ops.MayClearStandard(t, ns, row); err != nil {
			return nil, err
		}
		return &aimemoryv1.ClearStandardResponse{Cleared: true}, t.DeleteRecords(ops.Key{Kind: ops.KindStandard, ID: ns})
	})
}

// GetStandard reads ns's standard, or with inherit the whole chain's, and
// the policy in force for ns, from one snapshot.
func (s *Store) GetStandard(ctx context.Context, req *aimemoryv1.GetStandardRequest) (*aimemoryv1.GetStandardResponse, error) {
	if err := ops.ValidStandardNamespace("namespace", req.GetNamespace()); err != nil {
		return nil, err
	}
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.GetStandardResponse, error) {
		return ops.GetStandard(ctx, t.View(), req, t.Get)
	})
}

// Pending actions. A write the namespace policy queues is recorded, in the
// same transaction as the policy's answer (writeGoverned), as a pending
// action whose payload is the request itself; nothing else of it is
// written. Approving it runs that request, as its requester, inside the
// transaction that marks it approved, so it executes exactly once however
// many approvers race: the backend orders their transactions (bbolt's
// writer lock; PostgreSQL's lock on the pending row, the later one
// retried), and the second finds it decided.

// ListPending lists pending actions of one status (default pending) or
// all, newest first (requested_at, then id, descending), those the caller
// may read. Expiry is decided at read time (ops.Effective): a "pending"
// row past its expires_at lists as expired.
func (s *Store) ListPending(ctx context.Context, req *aimemoryv1.ListPendingRequest) (*aimemoryv1.ListPendingResponse, error) {
	want, limit, err := ops.ListPendingArgs(req)
	if err != nil {
		return nil, err
	}
	readable := authz.Of(ctx).Reader()
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.ListPendingResponse, error) {
		resp := &aimemoryv1.ListPendingResponse{}
		now := t.Now()
		return resp, t.EachPending(want, now, func(p *aimemoryv1.PendingAction) bool {
			if ops.Listed(readable, p, want, now) {
				resp.Pending = append(resp.Pending, p)
			}
			return len(resp.Pending) < limit
		})
	})
}

// ApprovePending records the caller's approval of a pending action and,
// when the approver rule is met, executes it in the same transaction
// (ops.Approve).
func (s *Store) ApprovePending(ctx context.Context, req *aimemoryv1.DecidePendingRequest) (*aimemoryv1.ApprovePendingResponse, error) {
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.ApprovePendingResponse, error) {
		return ops.Approve(approving{t}, req.GetId())
	})
}

// RejectPending refuses a pending action (ops.Reject).
func (s *Store) RejectPending(ctx context.Context, req *aimemoryv1.DecidePendingRequest) (*aimemoryv1.RejectPendingResponse, error) {
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.RejectPendingResponse, error) { return ops.Reject(t, req.GetId()) })
}

// The agent registry (ops/registry.go): one long-tier memory per agent in
// the guarded namespace _agents, titled agent:<principal>. The unique
// title makes two engines registering one agent at once one registration
// (the later merges). Last-seen times are noted per engine (NoteSeen) and
// reach the entries with that engine's FlushSeen.

// RegisterAgent registers (or refreshes) the caller in the registry;
// re-registration keeps registered_at and refreshes last_seen_at.
func (s *Store) RegisterAgent(ctx context.Context, req *aimemoryv1.RegisterAgentRequest) (*aimemoryv1.RegisterAgentResponse, error) {
	// The entry is read as the registry's owner (t.Get shows only what its
	// context may read): registered_at is kept whoever registers again.
	store, err := read(authz.AsOwner(ctx, authz.GuardAgents), s, func(t seam.Tx) (*aimemoryv1.StoreMemoryRequest, error) {
		return ops.Registration(ctx, t.View().Governance(), req, time.Unix(0, t.Now()), func(title string) (*aimemoryv1.Memory, error) {
			id, err := t.TitleOwner(authz.GuardAgents.Name, title)
			if err != nil || id == "" {
				return nil, err
			}
			return t.Get(id)
		})
	})
	if err != nil {
		return nil, err
	}
	resp, err := s.StoreMemory(authz.AsOwner(ctx, authz.GuardAgents), store)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.RegisterAgentResponse{Agent: resp.Memory, Created: resp.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED}, nil
}

// eachAgent visits every registry entry, in title order.
func eachAgent(t seam.Tx, fn func(*aimemoryv1.Memory, ops.AgentMeta) error) error {
	return t.EachTitled(authz.GuardAgents.Name, ops.AgentTitlePrefix, func(m *aimemoryv1.Memory) error {
		return fn(m, ops.ParseAgent(m))
	})
}

// ListAgents is the registry as the caller may see it (ops.AgentLister),
// registered_at ascending, each last-seen the later of the stored one and
// the calls this engine saw since its last flush (another engine's show
// after that engine's FlushSeen).
func (s *Store) ListAgents(ctx context.Context, _ *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error) {
	resp := &aimemoryv1.ListAgentsResponse{}
	listed := ops.AgentLister(ctx)
	err := s.b.Read(ctx, func(t seam.Tx) error {
		return eachAgent(t, func(_ *aimemoryv1.Memory, a ops.AgentMeta) error {
			if listed(a) {
				resp.Agents = append(resp.Agents, a.Agent(s.seen.At(a.AgentID)))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	ops.SortAgents(resp.Agents)
	return resp, nil
}

// NoteSeen records a call of principal now. Cheap: one lock, one map
// write; FlushSeen writes them into the registry on the engine's schedule.
func (s *Store) NoteSeen(principal string) { s.seen.Note(principal, s.b.Now()) }

// FlushSeen writes the last-seen times noted since the last flush into
// the registry entries of registered identities, in one transaction. It
// is bookkeeping, not an edit: no superseded version, no updated_at, no
// policy question (the engine writes its own registry).
func (s *Store) FlushSeen(ctx context.Context) (int, error) {
	pending := s.seen.Take()
	if len(pending) == 0 {
		return 0, nil
	}
	n := 0
	err := s.b.Write(authz.AsOwner(ctx, authz.GuardAgents), func(t seam.Tx) error {
		n = 0
		return eachAgent(t, func(m *aimemoryv1.Memory, a ops.AgentMeta) error {
			at, ok := pending[a.AgentID]
			if !ok {
				return nil
			}
			next, err := ops.SeenUpdate(m, a, at)
			if err != nil || next == nil {
				return err
			}
			n++
			return t.Put(m, next, "")
		})
	})
	if err != nil { // keep them for the next flush
		s.seen.Restore(pending)
		return 0, err
	}
	return n, nil
}
