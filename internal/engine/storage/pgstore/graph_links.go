package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Links (migrations/00002_graph.sql): the wire Link in table links while
// both ends are live (foreign keys cascading on delete), in archived_links
// once an end is archived. The steps are shared with boltstore (ops,
// records); Tx.Links reads in boltstore's order: an id's outbound links by
// (target, relation), its inbound ones by (source, relation). A read runs
// in one snapshot of the database, so it sees every engine's committed
// writes.

// Link tables.
const (
	liveLinks     = "links"
	archivedLinks = "archived_links"
)

func decodeLink(raw []byte) (*aimemoryv1.Link, error) {
	l := new(aimemoryv1.Link)
	if err := proto.Unmarshal(raw, l); err != nil {
		return nil, fmt.Errorf("decode link: %w", err)
	}
	return l, nil
}

func encodeLink(l *aimemoryv1.Link) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(l)
}

// graphRead runs fn in one read-only snapshot of the database.
func (s *Store) graphRead(ctx context.Context, fn func(q pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(tx)
}

// queryLinks decodes the links a query's single record column returns.
func queryLinks(ctx context.Context, q pgx.Tx, sql string, args ...any) ([]*aimemoryv1.Link, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*aimemoryv1.Link
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		l, err := decodeLink(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// around is the links of a set of memories in one link table: outbound by
// source, inbound by target, each in boltstore's key order.
type around struct{ out, in map[string][]*aimemoryv1.Link }

// linksAround reads the links of ids in table in direction dir, of one
// relation ("" = any): one indexed query per direction for the whole set.
func linksAround(ctx context.Context, q pgx.Tx, table string, ids []string, dir aimemoryv1.Direction, relation string) (around, error) {
	a := around{out: map[string][]*aimemoryv1.Link{}, in: map[string][]*aimemoryv1.Link{}}
	if len(ids) == 0 {
		return a, nil
	}
	if dir != aimemoryv1.Direction_DIRECTION_IN {
		ls, err := queryLinks(ctx, q, `SELECT record FROM `+table+` WHERE source_id = ANY($1) AND ($2 = '' OR relation = $2)
			ORDER BY source_id, target_id, relation`, ids, relation)
		if err != nil {
			return a, err
		}
		for _, l := range ls {
			a.out[l.SourceId] = append(a.out[l.SourceId], l)
		}
	}
	if dir != aimemoryv1.Direction_DIRECTION_OUT {
		ls, err := queryLinks(ctx, q, `SELECT record FROM `+table+` WHERE target_id = ANY($1) AND ($2 = '' OR relation = $2)
			ORDER BY target_id, source_id, relation`, ids, relation)
		if err != nil {
			return a, err
		}
		for _, l := range ls {
			a.in[l.TargetId] = append(a.in[l.TargetId], l)
		}
	}
	return a, nil
}

// The link steps' view of the transaction (ops.LinkTx).
func (t opsTx) Emit(event string, m *aimemoryv1.Memory) { t.w.emit(event, m) }

// readLink reads a link of table; nil when absent.
func (w *writeTx) readLink(table, source, target, relation string) (*aimemoryv1.Link, error) {
	var raw []byte
	err := w.tx.QueryRow(w.ctx, `SELECT record FROM `+table+` WHERE source_id = $1 AND target_id = $2 AND relation = $3`,
		source, target, relation).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeLink(raw)
}

// writeLink writes l into table, replacing the row of its key.
func (w *writeTx) writeLink(table string, l *aimemoryv1.Link) error {
	raw, err := encodeLink(l)
	if err != nil {
		return err
	}
	_, err = w.tx.Exec(w.ctx, `INSERT INTO `+table+` (source_id, target_id, relation, record) VALUES ($1, $2, $3, $4)
		ON CONFLICT (source_id, target_id, relation) DO UPDATE SET record = EXCLUDED.record`,
		l.SourceId, l.TargetId, l.Relation, raw)
	return err
}

// Links is the links of ids in the live or archived link table (seam.Tx):
// one indexed query per direction for the whole set.
func (t opsTx) Links(ids []string, dir aimemoryv1.Direction, relation string, archived bool) (out, in map[string][]*aimemoryv1.Link, err error) {
	table := liveLinks
	if archived {
		table = archivedLinks
	}
	a, err := linksAround(t.w.ctx, t.w.tx, table, ids, dir, relation)
	return a.out, a.in, err
}

// Summaries reads the title and namespace columns of the live memories;
// an archive row is decoded.
func (t opsTx) Summaries(ids []string, archived bool) (live, arch map[string]*aimemoryv1.NodeSummary, err error) {
	live, arch = make(map[string]*aimemoryv1.NodeSummary, len(ids)), map[string]*aimemoryv1.NodeSummary{}
	if len(ids) == 0 {
		return live, arch, nil
	}
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT id, title, namespace FROM memories WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		n := &aimemoryv1.NodeSummary{}
		if err := rows.Scan(&n.Id, &n.Title, &n.Namespace); err != nil {
			rows.Close()
			return nil, nil, err
		}
		live[n.Id] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil || !archived {
		return live, arch, err
	}
	rows, err = t.w.tx.Query(t.w.ctx, `SELECT record FROM archived WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, nil, err
		}
		m, err := decodeMemory(raw)
		if err != nil {
			return nil, nil, err
		}
		arch[m.Id] = &aimemoryv1.NodeSummary{Id: m.Id, Title: m.Title, Namespace: m.Namespace}
	}
	return live, arch, rows.Err()
}

// archiveLinks moves every live link touching id into archived_links (in
// the transaction that archives it, before its row is deleted).
func (w *writeTx) archiveLinks(id string) error {
	_, err := w.tx.Exec(w.ctx, `WITH moved AS (DELETE FROM links WHERE source_id = $1 OR target_id = $1 RETURNING *)
		INSERT INTO archived_links SELECT * FROM moved
		ON CONFLICT (source_id, target_id, relation) DO UPDATE SET record = EXCLUDED.record`, id)
	return err
}

// removeForGood removes m and every link touching it, live (the foreign
// keys cascade) or archived.
func (w *writeTx) removeForGood(m *aimemoryv1.Memory, event string) error {
	if err := w.deleteArchivedLinks(m.GetId()); err != nil {
		return err
	}
	return w.remove(m, event)
}

// deleteArchivedLinks removes the archived links touching ids: their ends
// are gone for good (a removal, the archive purge).
func (w *writeTx) deleteArchivedLinks(ids ...string) error {
	_, err := w.tx.Exec(w.ctx, `DELETE FROM archived_links WHERE source_id = ANY($1) OR target_id = ANY($1)`, ids)
	return err
}

// restoreLinks is restore's step for the links of id, live again: archived
// links whose other end is live become live. It reports what
// RestoreMemoryResponse does: the links moved back and those kept in the
// archive (their other end is archived still).
func (w *writeTx) restoreLinks(id string) (moved, kept uint32, err error) {
	err = w.tx.QueryRow(w.ctx, `WITH moved AS (
			DELETE FROM archived_links a WHERE (a.source_id = $1 OR a.target_id = $1) AND EXISTS (
				SELECT 1 FROM memories m WHERE m.id = CASE WHEN a.source_id = $1 THEN a.target_id ELSE a.source_id END)
			RETURNING *),
		ins AS (INSERT INTO links SELECT * FROM moved
			ON CONFLICT (source_id, target_id, relation) DO UPDATE SET record = EXCLUDED.record RETURNING 1)
		SELECT count(*) FROM ins`, id).Scan(&moved)
	if err != nil {
		return 0, 0, err
	}
	err = w.tx.QueryRow(w.ctx, `SELECT count(*) FROM archived_links WHERE source_id = $1 OR target_id = $1`, id).Scan(&kept)
	return moved, kept, err
}

// relinkArchived moves the archived links of from onto to (a restore
// merged into the live memory to): live when the other end is live, else
// kept in the archive; a link that would join to to itself, or that to
// already has, is dropped (boltstore's relinkArchived).
func (w *writeTx) relinkArchived(from, to string) (moved, kept uint32, err error) {
	a, err := linksAround(w.ctx, w.tx, archivedLinks, []string{from}, aimemoryv1.Direction_DIRECTION_BOTH, "")
	if err != nil {
		return 0, 0, err
	}
	if err := w.deleteArchivedLinks(from); err != nil {
		return 0, 0, err
	}
	for _, l := range ops.CollectLinks(a.out, a.in, from, nil, map[string]bool{}, nil) {
		n := proto.Clone(l).(*aimemoryv1.Link)
		if n.SourceId == from {
			n.SourceId = to
		}
		if n.TargetId == from {
			n.TargetId = to
		}
		if n.SourceId == n.TargetId {
			continue
		}
		other := n.TargetId
		if other == to {
			other = n.SourceId
		}
		table := archivedLinks
		if m, err := w.get(other); err != nil {
			return 0, 0, err
		} else if m != nil {
			table = liveLinks
		}
		if old, err := w.readLink(table, n.SourceId, n.TargetId, n.Relation); err != nil {
			return 0, 0, err
		} else if old != nil {
			continue
		}
		if err := w.writeLink(table, n); err != nil {
			return 0, 0, err
		}
		if table == liveLinks {
			moved++
		} else {
			kept++
		}
	}
	return moved, kept, nil
}
