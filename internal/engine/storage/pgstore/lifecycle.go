package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The archive lifecycle: the records the shared steps of forget, promote,
// consolidate and restore read and write here (ops.ArchiveTx; their
// shells are package records'). Only how forget finds its matches is this
// backend's own.

// forgetMatches reads the memories crit matches, oldest first, from the
// database itself, not from this engine's index: inside a write's
// SERIALIZABLE transaction the read is of the state the write commits on,
// and a memory another engine stores or changes meanwhile so that it
// would match makes one of the two transactions fail and retry. A pattern
// is every term in the stored term list (the GIN index answers it), as
// boltstore checks its candidates against theirs.
func forgetMatches(ctx context.Context, q pgx.Tx, crit *rules.Forget) ([]*aimemoryv1.Memory, error) {
	var (
		where string
		args  []any
	)
	switch {
	case len(crit.Terms) > 0 && crit.Namespace != "":
		where, args = `WHERE terms @> $1 AND namespace = $2`, []any{crit.Terms, crit.Namespace}
	case len(crit.Terms) > 0:
		where, args = `WHERE terms @> $1`, []any{crit.Terms}
	case crit.Namespace != "":
		where, args = `WHERE namespace = $1`, []any{crit.Namespace}
	}
	rows, err := q.Query(ctx, `SELECT record FROM memories `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*aimemoryv1.Memory
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		m, err := decodeMemory(raw)
		if err != nil {
			return nil, err
		}
		if crit.Matches(m) {
			out = append(out, m)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ops.SortForget(out)
	return out, nil
}

// ForgetMatches is what req matches for the transaction's caller (seam.Tx).
func (t opsTx) ForgetMatches(req *aimemoryv1.ForgetRequest) ([]*aimemoryv1.Memory, error) {
	crit, err := rules.NewForget(req, t.w.s.an.Query, authz.Of(t.w.ctx).Reads)
	if err != nil {
		return nil, err
	}
	return forgetMatches(t.w.ctx, t.w.tx, crit)
}

// The archive lifecycle's view of this backend (ops.ArchiveTx). Links are
// the graph's tables: read, written and moved by the graph's steps.

// Versions is id's superseded versions, oldest first (seam.Tx).
func (t opsTx) Versions(id string) ([]*storage.Archived, error) {
	return scanAll(t.w.ctx, t.w.tx, `SELECT `+versionCols+` FROM versions WHERE id = $1 ORDER BY archived_at`, id)
}

func (t opsTx) ReviveLinks(id string) (revived, kept uint32, err error) {
	return t.w.restoreLinks(id)
}
func (t opsTx) RelinkArchived(from, to string) (moved, kept uint32, err error) {
	return t.w.relinkArchived(from, to)
}

var _ ops.ArchiveTx = opsTx{}
