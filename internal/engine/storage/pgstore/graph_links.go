package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Links (migrations/00002_graph.sql): the wire Link in table links while
// both ends are live (foreign keys cascading on delete), in archived_links
// once an end is archived. The write steps are ops.PutLink and
// ops.InvalidateLink, shared with boltstore; the reads below return what
// boltstore's do, in its order: per asked id, its outbound links by
// (target, relation), then its inbound ones by (source, relation), each
// link once. Reads run on the database in one snapshot, so they see every
// engine's committed writes.

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

// linkKey identifies a link in a seen set.
func linkKey(l *aimemoryv1.Link) string {
	return l.SourceId + "\x00" + l.TargetId + "\x00" + l.Relation
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

// collect appends id's links in a to dst (outbound, then inbound), each
// once (seen; nil keeps all) and as the filter sees it (nil = rejected).
func (a around) collect(id string, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) []*aimemoryv1.Link {
	for _, ls := range [][]*aimemoryv1.Link{a.out[id], a.in[id]} {
		for _, l := range ls {
			if seen != nil {
				k := linkKey(l)
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			if l = f.View(l); l != nil {
				dst = append(dst, l)
			}
		}
	}
	return dst
}

// GetLinks returns the links of a set of memories in one call, filtered by
// relation, validity at an instant and observer, with the far ends'
// titles on request: a traversal's frontier read (ops.LinksAnswer, as
// boltstore's). Every query of the read goes in one round trip, in one
// snapshot (frontier).
func (s *Store) GetLinks(ctx context.Context, req *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	f, err := ops.ValidateGetLinks(req)
	if err != nil {
		return nil, err
	}
	relation := ""
	if f != nil {
		relation = f.Relation
	}
	fr, err := s.frontier(ctx, rules.Dedupe(append([]string(nil), req.GetIds()...)), req.GetDirection(), relation, req.GetIncludeArchived())
	if err != nil {
		return nil, err
	}
	return ops.LinksAnswer(authz.Of(ctx).Reader(), req, f, fr)
}

// Traverse walks breadth-first (ops.TraverseAnswer), one frontier read
// (one round trip, one snapshot) per level, as the plugin's walk of one
// GetLinks call per level read before.
func (s *Store) Traverse(ctx context.Context, req *aimemoryv1.TraverseRequest) (*aimemoryv1.TraverseResponse, error) {
	w, err := ops.ValidateTraverse(req)
	if err != nil {
		return nil, err
	}
	return ops.TraverseAnswer(authz.Of(ctx).Reader(), w, func(ids []string) (ops.LinkReads, error) {
		return s.frontier(ctx, ids, req.GetDirection(), req.GetRelation(), false)
	})
}

// frontierRead is what GetLinks reads of a set of memories: their links,
// live and (on request) archived, and a summary of every memory named,
// live or archived.
type frontierRead struct {
	links, archived around
	nodes           map[string]*aimemoryv1.NodeSummary
	live, arch      map[string]bool // of the asked ids
}

// frontierRead is ops.LinkReads over what it read.
var _ ops.LinkReads = (*frontierRead)(nil)

func (fr *frontierRead) Exists(id string) (live, archived bool, err error) {
	return fr.live[id], fr.arch[id], nil
}

func (fr *frontierRead) Node(id string) (*aimemoryv1.NodeSummary, error) {
	if n := fr.nodes[id]; n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("link names missing memory %s", id)
}

// Links: the direction and relation were applied by the queries.
func (fr *frontierRead) Links(id string, archived bool, _ aimemoryv1.Direction, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) ([]*aimemoryv1.Link, error) {
	if archived {
		return fr.archived.collect(id, f, seen, dst), nil
	}
	return fr.links.collect(id, f, seen, dst), nil
}

// frontier reads the links of ids in direction dir (one relation, "" =
// any) with the summaries of both their ends, in one round trip: the
// queries are pipelined in one REPEATABLE READ transaction, so they see
// one snapshot. A live link's far end is live (the foreign keys), joined
// from memories; an archived link's may be either, so both are joined.
func (s *Store) frontier(ctx context.Context, ids []string, dir aimemoryv1.Direction, relation string, archived bool) (*frontierRead, error) {
	fr := &frontierRead{
		links:    around{out: map[string][]*aimemoryv1.Link{}, in: map[string][]*aimemoryv1.Link{}},
		archived: around{out: map[string][]*aimemoryv1.Link{}, in: map[string][]*aimemoryv1.Link{}},
		nodes:    make(map[string]*aimemoryv1.NodeSummary, len(ids)),
		live:     make(map[string]bool, len(ids)),
		arch:     make(map[string]bool, len(ids)),
	}
	if len(ids) == 0 {
		return fr, nil
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY`)
	b.Queue(`SELECT id, title, namespace FROM memories WHERE id = ANY($1)`, ids).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			n := &aimemoryv1.NodeSummary{}
			if err := rows.Scan(&n.Id, &n.Title, &n.Namespace); err != nil {
				return err
			}
			fr.nodes[n.Id], fr.live[n.Id] = n, true
		}
		return rows.Err()
	})
	if archived {
		b.Queue(`SELECT id, record FROM archived WHERE id = ANY($1)`, ids).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var (
					id  string
					raw []byte
				)
				if err := rows.Scan(&id, &raw); err != nil {
					return err
				}
				fr.arch[id] = true
				if err := fr.noteArchived(raw); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	}
	tables := []string{liveLinks}
	if archived {
		tables = append(tables, archivedLinks)
	}
	for _, table := range tables {
		dst := &fr.links
		if table == archivedLinks {
			dst = &fr.archived
		}
		for _, d := range []struct {
			dir       aimemoryv1.Direction
			own, far  string
			byOwn     map[string][]*aimemoryv1.Link
			ownOfLink func(*aimemoryv1.Link) string
		}{
			{aimemoryv1.Direction_DIRECTION_OUT, "source_id", "target_id", dst.out, func(l *aimemoryv1.Link) string { return l.SourceId }},
			{aimemoryv1.Direction_DIRECTION_IN, "target_id", "source_id", dst.in, func(l *aimemoryv1.Link) string { return l.TargetId }},
		} {
			if dir != aimemoryv1.Direction_DIRECTION_UNSPECIFIED && dir != aimemoryv1.Direction_DIRECTION_BOTH && dir != d.dir {
				continue
			}
			where := `l.` + d.own + ` = ANY($1)`
			args := []any{ids}
			if relation != "" {
				where += ` AND l.relation = $2`
				args = append(args, relation)
			}
			sql := `SELECT l.record, m.id, m.title, m.namespace, NULL::bytea FROM ` + table + ` l
				JOIN memories m ON m.id = l.` + d.far + ` WHERE ` + where
			if table == archivedLinks {
				sql = `SELECT l.record, m.id, m.title, m.namespace, a.record FROM ` + table + ` l
					LEFT JOIN memories m ON m.id = l.` + d.far + ` LEFT JOIN archived a ON m.id IS NULL AND a.id = l.` + d.far + ` WHERE ` + where
			}
			sql += ` ORDER BY l.` + d.own + `, l.` + d.far + `, l.relation`
			byOwn, ownOf := d.byOwn, d.ownOfLink
			b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					var (
						raw, arch       []byte
						id, title, nspc *string
					)
					if err := rows.Scan(&raw, &id, &title, &nspc, &arch); err != nil {
						return err
					}
					l, err := decodeLink(raw)
					if err != nil {
						return err
					}
					byOwn[ownOf(l)] = append(byOwn[ownOf(l)], l)
					switch {
					case id != nil:
						fr.nodes[*id] = &aimemoryv1.NodeSummary{Id: *id, Title: *title, Namespace: *nspc}
					case arch != nil:
						if err := fr.noteArchived(arch); err != nil {
							return err
						}
					}
				}
				return rows.Err()
			})
		}
	}
	b.Queue(`COMMIT`)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return fr, nil
}

// noteArchived records an archived memory's summary unless a live one of
// its id is known (live first, as boltstore's anyNodeSummary).
func (fr *frontierRead) noteArchived(raw []byte) error {
	m, err := decodeMemory(raw)
	if err != nil {
		return err
	}
	if fr.nodes[m.Id] == nil {
		fr.nodes[m.Id] = &aimemoryv1.NodeSummary{Id: m.Id, Title: m.Title, Namespace: m.Namespace}
	}
	return nil
}

// PutLink creates the link, or revives an invalidated one (see
// PutLinkOutcome); a link valid with no end is left as it is, answered
// from a read with no write. Both memories must exist (expired-but-
// uncollected ones do).
func (s *Store) PutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	rel, by, err := ops.ValidatePutLink(ctx, req)
	if err != nil {
		return nil, err
	}
	var (
		raw              []byte
		sourceNS, target string
	)
	// A live link's ends are live (the foreign keys).
	err = s.pool.QueryRow(ctx, `SELECT l.record, s.namespace, t.namespace FROM links l
		JOIN memories s ON s.id = l.source_id JOIN memories t ON t.id = l.target_id
		WHERE l.source_id = $1 AND l.target_id = $2 AND l.relation = $3`,
		req.GetSourceId(), req.GetTargetId(), rel).Scan(&raw, &sourceNS, &target)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	if raw != nil {
		current, err := decodeLink(raw)
		if err != nil {
			return nil, err
		}
		if ops.Unchanged(ctx, current, sourceNS, target) {
			return &aimemoryv1.PutLinkResponse{Link: current, Outcome: aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED}, nil
		}
	}
	var resp *aimemoryv1.PutLinkResponse
	err = s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Link{Link: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.PutLinkResponse{}
		return w.putLink(req, rel, by, resp)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// InvalidateLink sets the end of the link's current interval
// (ops.InvalidateLink).
func (s *Store) InvalidateLink(ctx context.Context, req *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	by, err := ops.ValidateInvalidateLink(ctx, req)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.InvalidateLinkResponse
	err = s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Unlink{Unlink: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.InvalidateLinkResponse{}
		return w.invalidateLink(req, by, resp)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// putLink is PutLink inside a transaction, on a validated request: also
// the approval path's executor.
func (w *writeTx) putLink(req *aimemoryv1.PutLinkRequest, rel, observedBy string, resp *aimemoryv1.PutLinkResponse) error {
	return ops.PutLink(opsTx{w}, req, rel, observedBy, resp)
}

// invalidateLink is InvalidateLink inside a transaction, on a validated
// request: also the approval path's executor.
func (w *writeTx) invalidateLink(req *aimemoryv1.InvalidateLinkRequest, by string, resp *aimemoryv1.InvalidateLinkResponse) error {
	return ops.InvalidateLink(opsTx{w}, req, by, resp)
}

// The link steps' view of the transaction (ops.LinkTx).
func (t opsTx) ReadLink(source, target, relation string) (*aimemoryv1.Link, error) {
	return t.w.readLink(liveLinks, source, target, relation)
}
func (t opsTx) WriteLink(l *aimemoryv1.Link) error      { return t.w.writeLink(liveLinks, l) }
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

// LinkTimeline lists a memory's outbound links, one event per validity
// interval whose start lies in [since, until] (ops.Timeline), the first
// limit of them, each with its target's title and namespace.
func (s *Store) LinkTimeline(ctx context.Context, req *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error) {
	tq, err := ops.ValidateTimeline(req)
	if err != nil {
		return nil, err
	}
	readable := authz.Of(ctx).Reader()
	resp := &aimemoryv1.LinkTimelineResponse{}
	err = s.graphRead(ctx, func(q pgx.Tx) error {
		var ns string
		err := q.QueryRow(ctx, `SELECT namespace FROM memories WHERE id = $1`, tq.Source).Scan(&ns)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !readable(ns)) {
			return fmt.Errorf("source_id: %w: %s", storage.ErrNotFound, tq.Source)
		}
		if err != nil {
			return err
		}
		// A live link's target is live (the foreign keys): joined for its summary.
		rows, err := q.Query(ctx, `SELECT l.record, m.title, m.namespace FROM links l JOIN memories m ON m.id = l.target_id
			WHERE l.source_id = $1 ORDER BY l.target_id, l.relation`, tq.Source)
		if err != nil {
			return err
		}
		var links []*aimemoryv1.Link
		nodes := map[string]*aimemoryv1.NodeSummary{}
		for rows.Next() {
			var raw []byte
			n := &aimemoryv1.NodeSummary{}
			if err := rows.Scan(&raw, &n.Title, &n.Namespace); err != nil {
				rows.Close()
				return err
			}
			l, err := decodeLink(raw)
			if err != nil {
				rows.Close()
				return err
			}
			n.Id = l.TargetId
			links, nodes[n.Id] = append(links, l), n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		node := func(id string) (*aimemoryv1.NodeSummary, error) {
			if n := nodes[id]; n != nil {
				return n, nil
			}
			return nil, fmt.Errorf("link names missing memory %s", id)
		}
		kept := links[:0] // what the caller may not read is not there
		for _, l := range links {
			n, err := node(l.TargetId)
			if err != nil {
				return err
			}
			if readable(n.Namespace) {
				kept = append(kept, l)
			}
		}
		links = kept
		events := tq.Events(links)
		resp.Total = uint32(len(events))
		for _, l := range events[:min(tq.Limit, len(events))] {
			n, err := node(l.TargetId)
			if err != nil {
				return err
			}
			resp.Events = append(resp.Events, &aimemoryv1.TimelineEvent{Link: l, Target: n})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
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
	for _, l := range a.collect(from, nil, map[string]bool{}, nil) {
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
