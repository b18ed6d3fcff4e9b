package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

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

// Keywords is the analyzer and the in-memory index (current to this
// engine's commits and its last catch-up).
func (s *Store) Keywords() (*keyword.Analyzer, *index.Index) { return s.an, s.idx }

// opsTx is this backend's transaction as the shared write steps see it.
type opsTx struct{ w *writeTx }

func (t opsTx) Context() context.Context { return t.w.ctx }
func (t opsTx) Get(id string) (*aimemoryv1.Memory, error) {
	m, err := t.w.get(id)
	return ops.Visible(t.w.ctx, m), err
}
func (t opsTx) TitleOwner(ns, title string) (string, error) { return t.w.titleOwner(ns, title) }
func (t opsTx) Authorize(write storage.Write) error         { return t.w.authorize(write) }
func (t opsTx) Archive(m *aimemoryv1.Memory, reason, ev string) error {
	return t.w.archive(m, reason, ev)
}
func (t opsTx) Put(old, m *aimemoryv1.Memory, ev string) error { return t.w.put(old, m, ev) }
func (t opsTx) Remove(m *aimemoryv1.Memory, ev string) error   { return t.w.removeForGood(m, ev) }
func (t opsTx) Now() int64                                     { return t.w.now }
func (t opsTx) TTL() storage.TTL                               { return t.w.s.ttl }

// seamTx is this backend's transaction as the shared steps see it
// (seam.Tx): ops.Tx and the rest over opsTx, and the governance records.
type seamTx struct{ opsTx }

func (t seamTx) View() storage.GovernanceView { return govView{w: t.w} }
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

// eachIDQueries read a page of ids past a cursor id (in EachID's order of
// archived, back), each with its namespace; the archive's is in its record.
var eachIDQueries = [2][2]string{
	{`SELECT id, namespace, NULL::bytea FROM memories WHERE id > $1 ORDER BY id LIMIT $2`,
		`SELECT id, namespace, NULL::bytea FROM memories WHERE id < $1 ORDER BY id DESC LIMIT $2`},
	{`SELECT id, NULL::text, record FROM archived WHERE id > $1 ORDER BY id LIMIT $2`,
		`SELECT id, NULL::text, record FROM archived WHERE id < $1 ORDER BY id DESC LIMIT $2`},
}

// EachID reads pages of ids, each page closed before fn sees it (fn may
// query in the same transaction); small first, as most walks stop at the
// first or second id.
func (t seamTx) EachID(archived, back bool, from string, fn func(id, namespace string) bool) error {
	type row struct{ id, ns string }
	query := eachIDQueries[b2i(archived)][b2i(back)]
	for page := 2; ; page = min(2*page, 256) {
		rows, err := t.w.tx.Query(t.w.ctx, query, from, page)
		if err != nil {
			return err
		}
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var (
				x   row
				ns  *string
				raw []byte
			)
			if err := r.Scan(&x.id, &ns, &raw); err != nil {
				return x, err
			}
			if ns != nil {
				x.ns = *ns
				return x, nil
			}
			m, err := decodeMemory(raw)
			x.ns = m.GetNamespace()
			return x, err
		})
		if err != nil {
			return err
		}
		for _, r := range got {
			if !fn(r.id, r.ns) {
				return nil
			}
		}
		if len(got) < page {
			return nil
		}
		from = got[len(got)-1].id
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
