package boltstore

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// This backend's seam (package seam): package records runs the shared
// shells in these transactions.

var _ seam.Backend = (*Store)(nil)

// Write runs fn in a group-committed write transaction (write).
func (s *Store) Write(ctx context.Context, fn func(seam.Tx) error) error {
	return s.write(ctx, func(w *writeTx) error { return fn(seamTx{opsTx{w}}) })
}

// Read runs fn in a bbolt read transaction; a write through it fails
// (bbolt.ErrTxNotWritable).
func (s *Store) Read(ctx context.Context, fn func(seam.Tx) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return fn(seamTx{opsTx{&writeTx{ctx: ctx, s: s, tx: tx, now: s.nowNanos()}}})
	})
}

// Now is the store's clock in unix nanoseconds.
func (s *Store) Now() int64 { return s.nowNanos() }

// Scan gives fn a fresh read transaction per read: none is held between
// them, so a paused export never pins pages a growing file must remap.
func (s *Store) Scan(ctx context.Context, fn func(read func(func(seam.Tx) error) error) error) error {
	return fn(func(f func(seam.Tx) error) error { return s.Read(ctx, f) })
}

// AuditChain is the chain the store was opened with.
func (s *Store) AuditChain() *audit.Chain { return s.audit }

// seamTx is this backend's transaction as the shared steps see it
// (seam.Tx): ops.Tx and the rest over opsTx, and the governance records.
type seamTx struct{ opsTx }

func (t seamTx) View() storage.GovernanceView { return govView{tx: t.w.tx, cfg: t.w.s.gov} }
func (t seamTx) PutStandard(st *aimemoryv1.Standard) error {
	return putStandard(t.w.tx, st)
}
func (t seamTx) DeleteStandard(ns string) error {
	return t.w.tx.Bucket(bucketStandards).Delete([]byte(ns))
}
func (t seamTx) Pending(id string) (*aimemoryv1.PendingAction, error) { return getPending(t.w.tx, id) }
func (t seamTx) PutPending(p *aimemoryv1.PendingAction) error         { return t.w.putPending(p) }
func (t seamTx) As(ctx context.Context, fn func() error) error {
	saved := t.w.ctx
	defer func() { t.w.ctx = saved }()
	t.w.ctx, t.w.pre = ctx, nil // pre was the outer request's text
	return fn()
}
func (t seamTx) Wrote() bool { return len(t.w.changes) > 0 || len(t.w.events) > 0 }

// EachTitled reads the title index's run of namespace and prefix, then
// calls fn with each memory (so fn may write to the buckets read).
func (t seamTx) EachTitled(namespace, prefix string, fn func(*aimemoryv1.Memory) error) error {
	p := titleKey(namespace, prefix)
	c := t.w.tx.Bucket(bucketTitles).Cursor()
	mems := t.w.tx.Bucket(bucketMemories)
	var all []*aimemoryv1.Memory
	for k, id := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, id = c.Next() {
		raw := mems.Get(id)
		if raw == nil {
			continue
		}
		m, err := decodeLive(raw)
		if err != nil {
			return err
		}
		all = append(all, m)
	}
	for _, m := range all {
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}
