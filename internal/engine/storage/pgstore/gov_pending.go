package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Pending actions, as boltstore's: a queued write is recorded in the
// transaction of the policy's answer (writeGoverned), and approving it
// runs the request, as its requester, inside the transaction that marks
// it approved (ops.Approve). Racing approvers, on one engine or several,
// queue on the pending row's lock (getPending); the later transaction is
// a serialization failure, retried, and then finds the action decided, so
// it executes exactly once.

// ListPending lists pending actions of one status (default pending) or
// all, newest first (requested_at, then id, descending).
func (s *Store) ListPending(ctx context.Context, req *aimemoryv1.ListPendingRequest) (*aimemoryv1.ListPendingResponse, error) {
	want, limit, err := ops.ListPendingArgs(req)
	if err != nil {
		return nil, err
	}
	now := s.nowNanos()
	// Expiry is decided at read time (ops.Effective): a "pending" row past
	// its expires_at lists as expired.
	where, args := "true", []any{limit}
	switch want {
	case "all":
	case storage.StatusPending:
		where, args = "status = 'pending' AND (expires_at = 0 OR expires_at > $2)", append(args, now)
	case ops.StatusExpired:
		where, args = "status = 'pending' AND expires_at <> 0 AND expires_at <= $2", append(args, now)
	default:
		where, args = "status = $2", append(args, want)
	}
	rows, err := s.pool.Query(ctx, `SELECT id, record FROM pending WHERE `+where+` ORDER BY requested_at DESC, id DESC LIMIT $1`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	resp := &aimemoryv1.ListPendingResponse{}
	for rows.Next() {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		p, err := decodePending(id, raw)
		if err != nil {
			return nil, err
		}
		resp.Pending = append(resp.Pending, ops.Effective(p, now))
	}
	return resp, rows.Err()
}

// ApprovePending records the caller's approval of a pending action and,
// when the approver rule is met, executes it in the same transaction.
func (s *Store) ApprovePending(ctx context.Context, req *aimemoryv1.DecidePendingRequest) (*aimemoryv1.ApprovePendingResponse, error) {
	var resp *aimemoryv1.ApprovePendingResponse
	err := s.write(ctx, func(w *writeTx) error {
		var err error
		resp, err = ops.Approve(govTx{opsTx{w}}, req.GetId())
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// RejectPending refuses a pending action (ops.Reject).
func (s *Store) RejectPending(ctx context.Context, req *aimemoryv1.DecidePendingRequest) (*aimemoryv1.RejectPendingResponse, error) {
	var resp *aimemoryv1.RejectPendingResponse
	err := s.write(ctx, func(w *writeTx) error {
		var err error
		resp, err = ops.Reject(govTx{opsTx{w}}, req.GetId())
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// govTx is this backend's transaction as the governance steps see it.
type govTx struct{ opsTx }

func (t govTx) Context() context.Context                             { return t.w.ctx }
func (t govTx) View() storage.GovernanceView                         { return govView{w: t.w} }
func (t govTx) PutStandard(st *aimemoryv1.Standard) error            { return t.w.putStandard(st) }
func (t govTx) Pending(id string) (*aimemoryv1.PendingAction, error) { return t.w.getPending(id) }
func (t govTx) PutPending(p *aimemoryv1.PendingAction) error         { return t.w.putPending(p) }
func (t govTx) ExecuteAs(p *aimemoryv1.PendingAction) (string, error) {
	return t.w.executeAs(p)
}

// executeAs runs p's payload as its requester, with the approval that
// lets its "approve" levels through.
func (w *writeTx) executeAs(p *aimemoryv1.PendingAction) (string, error) {
	saved := w.ctx
	defer func() { w.ctx = saved }()
	ctx := caller.NewContext(saved, caller.Caller{Principal: p.RequestedBy, Session: p.RequestedSession, Family: p.RequestedFamily})
	w.ctx = storage.WithApproval(ctx, p.Id)
	return w.execute(p.GetPayload())
}

// execute runs an approved payload in this transaction, as it would have
// run when it was requested (boltstore's writeTx.execute, case for case);
// the result is the memory it wrote or removed.
func (w *writeTx) execute(p *aimemoryv1.PendingPayload) (string, error) {
	switch a := p.GetAction().(type) {
	case *aimemoryv1.PendingPayload_Store:
		in, err := rules.New(a.Store.GetMemory())
		if err != nil {
			return "", err
		}
		resp := &aimemoryv1.StoreMemoryResponse{}
		if err := w.storeMemory(in, a.Store.GetOnConflict(), resp); err != nil {
			return "", err
		}
		return resp.GetMemory().GetId(), nil
	case *aimemoryv1.PendingPayload_Update:
		if err := rules.ValidatePatch(a.Update); err != nil {
			return "", err
		}
		return a.Update.GetId(), ops.Update(opsTx{w}, a.Update, &aimemoryv1.UpdateMemoryResponse{})
	case *aimemoryv1.PendingPayload_Delete:
		if err := rules.ValidateIDs("ids", a.Delete.GetIds()); err != nil {
			return "", err
		}
		resp := &aimemoryv1.DeleteMemoriesResponse{}
		if err := ops.Delete(opsTx{w}, rules.Dedupe(slices.Clone(a.Delete.GetIds())), a.Delete.GetArchive(), resp); err != nil {
			return "", err
		}
		if len(resp.Deleted) == 0 {
			return "", fmt.Errorf("%w: %s", storage.ErrNotFound, strings.Join(a.Delete.GetIds(), ", "))
		}
		return strings.Join(resp.Deleted, ","), nil
	case *aimemoryv1.PendingPayload_Link:
		rel := rules.Or(a.Link.GetRelation(), record.DefaultRelation)
		if err := record.ValidateLink(a.Link.GetSourceId(), a.Link.GetTargetId(), rel); err != nil {
			return "", err
		}
		return a.Link.GetSourceId(), w.putLink(a.Link, rel, a.Link.GetObservedBy(), &aimemoryv1.PutLinkResponse{})
	case *aimemoryv1.PendingPayload_Unlink:
		if err := record.ValidateLink(a.Unlink.GetSourceId(), a.Unlink.GetTargetId(), a.Unlink.GetRelation()); err != nil {
			return "", err
		}
		return a.Unlink.GetSourceId(), w.invalidateLink(a.Unlink, a.Unlink.GetInvalidatedBy(), &aimemoryv1.InvalidateLinkResponse{})
	case *aimemoryv1.PendingPayload_Forget:
		ids, err := w.approvedForget(a.Forget)
		return strings.Join(ids, ","), err
	case *aimemoryv1.PendingPayload_Promote:
		resp, err := w.promote(a.Promote.GetId(), a.Promote.GetToNamespace())
		return resp.GetMemory().GetId(), err
	case *aimemoryv1.PendingPayload_Consolidate:
		resp, err := w.consolidate(a.Consolidate)
		return resp.GetMemory().GetId(), err
	case *aimemoryv1.PendingPayload_Restore:
		resp, err := w.restore(a.Restore)
		return resp.GetMemory().GetId(), err
	}
	return "", fmt.Errorf("pending action has no payload this engine can execute")
}

// putPending writes p over the row of its id.
func (w *writeTx) putPending(p *aimemoryv1.PendingAction) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return err
	}
	_, err = w.tx.Exec(w.ctx, `INSERT INTO pending (id, requested_at, status, expires_at, record) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET requested_at = EXCLUDED.requested_at, status = EXCLUDED.status,
			expires_at = EXCLUDED.expires_at, record = EXCLUDED.record`,
		p.GetId(), p.GetRequestedAt(), p.GetStatus(), p.GetExpiresAt(), raw)
	return err
}

func decodePending(id string, raw []byte) (*aimemoryv1.PendingAction, error) {
	p := new(aimemoryv1.PendingAction)
	if err := proto.Unmarshal(raw, p); err != nil {
		return nil, fmt.Errorf("decode pending action %s: %w", id, err)
	}
	return p, nil
}

// getPending reads pending action id, locking its row for this
// transaction's decision: racing approvers (on any engine) queue on it,
// and the later one then retries and finds it decided.
func (w *writeTx) getPending(id string) (*aimemoryv1.PendingAction, error) {
	var raw []byte
	err := w.tx.QueryRow(w.ctx, `SELECT record FROM pending WHERE id = $1 FOR UPDATE`, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &storage.PendingNotFoundError{ID: id}
	}
	if err != nil {
		return nil, err
	}
	return decodePending(id, raw)
}
