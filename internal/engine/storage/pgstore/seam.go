package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// This backend's seam (package seam): package records runs the shared
// shells in these transactions.

var _ seam.Backend = (*Store)(nil)

// Write runs fn in a SERIALIZABLE transaction, rerun on a lost race (write).
func (s *Store) Write(ctx context.Context, fn func(seam.Tx) error) error {
	return s.write(ctx, func(w *writeTx) error { return fn(seamTx{opsTx{w}}) })
}

// Read runs fn in a read-only REPEATABLE READ transaction: one snapshot.
func (s *Store) Read(ctx context.Context, fn func(seam.Tx) error) error {
	return s.graphRead(ctx, func(tx pgx.Tx) error {
		return fn(seamTx{opsTx{&writeTx{ctx: ctx, s: s, tx: tx, now: s.nowNanos(), read: true}}})
	})
}

// Now is the store's clock in unix nanoseconds.
func (s *Store) Now() int64 { return s.nowNanos() }

// Scan runs every read of fn in one read-only REPEATABLE READ transaction:
// one snapshot, held for fn's length.
func (s *Store) Scan(ctx context.Context, fn func(read func(func(seam.Tx) error) error) error) error {
	return s.graphRead(ctx, func(tx pgx.Tx) error {
		t := seamTx{opsTx{&writeTx{ctx: ctx, s: s, tx: tx, now: s.nowNanos(), read: true}}}
		return fn(func(f func(seam.Tx) error) error { return f(t) })
	})
}

// AuditChain is the chain the store was opened with.
func (s *Store) AuditChain() *audit.Chain { return s.audit }

// seamTx is this backend's transaction as the shared steps see it
// (seam.Tx): ops.Tx and the rest over opsTx, and the governance records.
type seamTx struct{ opsTx }

func (t seamTx) View() storage.GovernanceView              { return govView{w: t.w} }
func (t seamTx) PutStandard(st *aimemoryv1.Standard) error { return t.w.putStandard(st) }
func (t seamTx) DeleteStandard(ns string) error {
	_, err := t.w.tx.Exec(t.w.ctx, `DELETE FROM standards WHERE namespace = $1`, ns)
	return err
}
func (t seamTx) Pending(id string) (*aimemoryv1.PendingAction, error) { return t.w.getPending(id) }
func (t seamTx) PutPending(p *aimemoryv1.PendingAction) error         { return t.w.putPending(p) }
func (t seamTx) As(ctx context.Context, fn func() error) error {
	saved := t.w.ctx
	defer func() { t.w.ctx = saved }()
	t.w.ctx = ctx
	return fn()
}
func (t seamTx) Wrote() bool { return len(t.w.changes) > 0 || len(t.w.events) > 0 }

// EachTitled reads the rows first, then calls fn with each (fn may write
// in the same transaction); titles in byte order, as boltstore's index.
func (t seamTx) EachTitled(namespace, prefix string, fn func(*aimemoryv1.Memory) error) error {
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT record FROM memories WHERE namespace = $1 AND starts_with(title, $2) ORDER BY title COLLATE "C"`,
		namespace, prefix)
	if err != nil {
		return err
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*aimemoryv1.Memory, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		return decodeMemory(raw)
	})
	if err != nil {
		return err
	}
	for _, m := range all {
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}
