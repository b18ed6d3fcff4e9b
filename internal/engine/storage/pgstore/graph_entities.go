package pgstore

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Entities (ops/entities.go): a memory with rows in entity_aliases, one
// per folded alias, unique per (folded, namespace) by a constraint, so two
// engines registering one alias at once cannot both win (the loser's
// retry finds it held). The rows cascade with the memory's delete (and so
// with its archiving, as boltstore drops them there), and move with an
// update (opsTx.Moved).

// The entity steps' view of the transaction (ops.EntityTx).
// AliasHolders is the entities holding folded in any namespace (seam.Tx).
func (t opsTx) AliasHolders(folded string) ([]string, error) {
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT entity_id FROM entity_aliases WHERE folded = $1`, folded)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (t opsTx) AliasHolder(folded, namespace string) (string, error) {
	var id string
	err := t.w.tx.QueryRow(t.w.ctx, `SELECT entity_id FROM entity_aliases WHERE folded = $1 AND namespace = $2`, folded, namespace).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (t opsTx) Aliases(id string) ([]string, []*aimemoryv1.EntityAlias, error) {
	return aliasesOf(t.w.ctx, t.w.tx, id)
}

func (t opsTx) AddAlias(id, namespace, f string, a *aimemoryv1.EntityAlias) error {
	_, err := t.w.tx.Exec(t.w.ctx, `INSERT INTO entity_aliases (entity_id, folded, namespace, alias, added_at, added_by)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (entity_id, folded) DO NOTHING`,
		id, f, namespace, a.Alias, a.AddedAt, a.AddedBy)
	return err
}

func (t opsTx) MoveAlias(id, f, from, to string) error {
	_, err := t.w.tx.Exec(t.w.ctx, `UPDATE entity_aliases SET namespace = $4 WHERE entity_id = $1 AND folded = $2 AND namespace = $3`, id, f, from, to)
	return err
}

// Moved moves an entity's aliases with an update of its namespace or
// title (ops.MoveEntity, as boltstore).
func (t opsTx) Moved(old, m *aimemoryv1.Memory) error { return ops.MoveEntity(t, old, m) }

// aliasesOf is entity id's alias set with the folded forms, in
// ops.AliasOrder.
func aliasesOf(ctx context.Context, q pgx.Tx, id string) ([]string, []*aimemoryv1.EntityAlias, error) {
	rows, err := q.Query(ctx, `SELECT folded, alias, added_at, added_by FROM entity_aliases WHERE entity_id = $1 ORDER BY folded`, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	type pair struct {
		f string
		a *aimemoryv1.EntityAlias
	}
	var all []pair
	for rows.Next() {
		p := pair{a: &aimemoryv1.EntityAlias{}}
		if err := rows.Scan(&p.f, &p.a.Alias, &p.a.AddedAt, &p.a.AddedBy); err != nil {
			return nil, nil, err
		}
		all = append(all, p)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(all, func(x, y pair) int { return ops.AliasOrder(x.a, y.a) })
	folded, out := make([]string, len(all)), make([]*aimemoryv1.EntityAlias, len(all))
	for i, p := range all {
		folded[i], out[i] = p.f, p.a
	}
	return folded, out, nil
}
