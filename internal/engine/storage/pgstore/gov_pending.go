package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Pending actions, as boltstore's: a queued write is recorded in the
// transaction of the policy's answer (records.writeGoverned), and approving it
// runs the request, as its requester, inside the transaction that marks
// it approved (ops.Approve). Racing approvers, on one engine or several,
// queue on the pending row's lock (getPending); the later transaction is
// a serialization failure, retried, and then finds the action decided, so
// it executes exactly once.

// EachPending reads the rows of status in the database, newest first
// (seam.Tx); expiry is decided at now, as ops.Effective.
func (t seamTx) EachPending(status string, now int64, fn func(*aimemoryv1.PendingAction) bool) error {
	where, args := "true", []any{}
	switch status {
	case "all":
	case storage.StatusPending:
		where, args = "status = 'pending' AND (expires_at = 0 OR expires_at > $1)", []any{now}
	case ops.StatusExpired:
		where, args = "status = 'pending' AND expires_at <> 0 AND expires_at <= $1", []any{now}
	default:
		where, args = "status = $1", []any{status}
	}
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT id, record FROM pending WHERE `+where+` ORDER BY requested_at DESC, id DESC`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return err
		}
		p, err := decodePending(id, raw)
		if err != nil {
			return err
		}
		if !fn(ops.Effective(p, now)) {
			return nil
		}
	}
	return rows.Err()
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
	lock := " FOR UPDATE"
	if w.read { // a read-only transaction locks nothing
		lock = ""
	}
	err := w.tx.QueryRow(w.ctx, `SELECT record FROM pending WHERE id = $1`+lock, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &storage.PendingNotFoundError{ID: id}
	}
	if err != nil {
		return nil, err
	}
	return decodePending(id, raw)
}
