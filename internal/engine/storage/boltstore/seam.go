package boltstore

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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

// Keywords is the analyzer and the in-memory index, applied in commit order.
func (s *Store) Keywords() (*keyword.Analyzer, *index.Index) { return s.an, s.idx }

// create writes m as a new memory (ops.Create: engine fields, policy, put).
func (w *writeTx) create(m *aimemoryv1.Memory, resp *aimemoryv1.StoreMemoryResponse) error {
	return ops.Create(opsTx{w}, m, resp)
}

// opsTx is this backend's transaction as the shared write steps see it.
type opsTx struct{ w *writeTx }

func (t opsTx) Context() context.Context { return t.w.ctx }
func (t opsTx) Get(id string) (*aimemoryv1.Memory, error) {
	m, err := t.w.get(id)
	return ops.Visible(t.w.ctx, m), err
}
func (t opsTx) TitleOwner(ns, title string) (string, error) { return t.w.titleOwner(ns, title), nil }
func (t opsTx) Authorize(write storage.Write) error         { return t.w.authorize(write) }
func (t opsTx) Archive(m *aimemoryv1.Memory, reason, ev string) error {
	return t.w.archive(m, reason, ev)
}
func (t opsTx) Put(old, m *aimemoryv1.Memory, ev string) error { return t.w.put(old, m, ev) }
func (t opsTx) Remove(m *aimemoryv1.Memory, ev string) error   { return t.w.removeForGood(m, ev) }
func (t opsTx) Moved(old, m *aimemoryv1.Memory) error          { return t.w.moveEntity(old, m) }
func (t opsTx) Now() int64                                     { return t.w.now }
func (t opsTx) TTL() storage.TTL                               { return t.w.s.ttl }

// seamTx is this backend's transaction as the shared steps see it
// (seam.Tx): ops.Tx and the rest over opsTx, and the governance records.
type seamTx struct{ opsTx }

func (t seamTx) View() storage.GovernanceView { return govView{tx: t.w.tx, cfg: t.w.s.gov} }
func (t seamTx) As(ctx context.Context, fn func() error) error {
	saved := t.w.ctx
	defer func() { t.w.ctx = saved }()
	t.w.ctx = ctx
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

// EachID walks the memories or archive bucket's keys from from, one
// cursor; the namespace is read from the row without decoding its content.
func (t seamTx) EachID(archived, back bool, from string, fn func(id, namespace string) bool) error {
	bucket, summary := bucketMemories, liveSummary
	if archived {
		bucket, summary = bucketArchive, archivedSummary
	}
	c := t.w.tx.Bucket(bucket).Cursor()
	p := []byte(from)
	k, v := c.Seek(p)
	switch {
	case back && k == nil:
		k, v = c.Last()
	case back:
		k, v = c.Prev()
	case bytes.Equal(k, p):
		k, v = c.Next()
	}
	for ; k != nil; k, v = step(c, back) {
		n, err := summary(string(k), v)
		if err != nil {
			return err
		}
		if !fn(string(k), n.GetNamespace()) {
			return nil
		}
	}
	return nil
}

func step(c *bolt.Cursor, back bool) ([]byte, []byte) {
	if back {
		return c.Prev()
	}
	return c.Next()
}
