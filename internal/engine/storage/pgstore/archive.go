package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The archive's list, statistics and purge, answered as boltstore answers
// them (the checks, order and answers are package ops', shared). Rows are
// read in one snapshot; what the caller may read is decided on the
// decoded record, as everywhere.

// archivedCols are an archive row's columns as scanArchived reads them.
const archivedCols = `archived_at, reason, original_tier, original_expires_at, record`

// versionCols are a superseded version's, in the same shape: its own
// time and reason where an import kept them apart from its key time
// (00006_vectors.sql), as boltstore's versions keep them.
const versionCols = `coalesce(row_archived_at, archived_at), coalesce(reason, 'superseded'), original_tier, original_expires_at, record`

// scanArchived reads one row of archivedCols; nil when there is none.
func scanArchived(row pgx.Row) (*storage.Archived, error) {
	a := &storage.Archived{}
	var raw []byte
	err := row.Scan(&a.ArchivedAt, &a.Reason, &a.OriginalTier, &a.OriginalExpiresAt, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if a.Memory, err = decodeMemory(raw); err != nil {
		return nil, err
	}
	return a, nil
}

// scanAll reads every row of a query selecting archivedCols (or versionCols).
func scanAll(ctx context.Context, q pgx.Tx, sql string, args ...any) ([]*storage.Archived, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*storage.Archived
	for rows.Next() {
		a := &storage.Archived{}
		var raw []byte
		if err := rows.Scan(&a.ArchivedAt, &a.Reason, &a.OriginalTier, &a.OriginalExpiresAt, &raw); err != nil {
			return nil, err
		}
		if a.Memory, err = decodeMemory(raw); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// readTx runs fn in a read-only snapshot.
func (s *Store) readTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(tx)
}

// ArchiveRows visits the archive rows of reason, or the superseded
// versions (seam.Tx).
func (t opsTx) ArchiveRows(reason string, fn func(*storage.Archived) error) error {
	sql, args := `SELECT `+archivedCols+` FROM archived`, []any(nil)
	switch reason {
	case "":
	case storage.ArchiveReasonSuperseded:
		sql = `SELECT ` + versionCols + ` FROM versions`
	default:
		sql, args = sql+` WHERE reason = $1`, []any{reason}
	}
	all, err := scanAll(t.w.ctx, t.w.tx, sql, args...)
	if err != nil {
		return err
	}
	for _, a := range all {
		if err := fn(a); err != nil {
			return err
		}
	}
	return nil
}

// VersionCounts is how many superseded versions each of ids has, in one
// query (seam.Tx).
func (t opsTx) VersionCounts(ids []string) (map[string]uint32, error) {
	counts := make(map[string]uint32, len(ids))
	res, err := t.w.tx.Query(t.w.ctx, `SELECT id, count(*) FROM versions WHERE id = ANY($1) GROUP BY id`, ids)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	for res.Next() {
		var (
			id string
			n  uint32
		)
		if err := res.Scan(&id, &n); err != nil {
			return nil, err
		}
		counts[id] = n
	}
	return counts, res.Err()
}

// ArchiveStats counts the archive rows the caller may read by reason and
// namespace (count desc, then key), with the oldest and newest
// archived_at, the size of rows and superseded versions (their records'
// bytes: not comparable with boltstore's encoding), and the versions kept.
func (s *Store) ArchiveStats(ctx context.Context) (*aimemoryv1.ArchiveStatsResponse, error) {
	resp := &aimemoryv1.ArchiveStatsResponse{}
	byReason, byNamespace := map[string]uint64{}, map[string]uint64{}
	grant := authz.Of(ctx)
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT archived_at, reason, record FROM archived`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				at     int64
				reason string
				raw    []byte
			)
			if err := rows.Scan(&at, &reason, &raw); err != nil {
				return err
			}
			m, err := decodeMemory(raw)
			if err != nil {
				return err
			}
			if !grant.Reads(m.GetNamespace()) {
				continue
			}
			resp.Total++
			resp.SizeBytes += uint64(len(raw))
			byReason[reason]++
			byNamespace[m.GetNamespace()]++
			if resp.OldestAt == 0 || at < resp.OldestAt {
				resp.OldestAt = at
			}
			resp.NewestAt = max(resp.NewestAt, at)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if grant.Everything() { // every namespace's versions: counted by the database
			var versions, size int64
			if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(octet_length(record)), 0) FROM versions`).Scan(&versions, &size); err != nil {
				return err
			}
			resp.Versions, resp.SizeBytes = uint64(versions), resp.SizeBytes+uint64(size)
			return nil
		}
		vrows, err := tx.Query(ctx, `SELECT record FROM versions`)
		if err != nil {
			return err
		}
		defer vrows.Close()
		for vrows.Next() {
			var raw []byte
			if err := vrows.Scan(&raw); err != nil {
				return err
			}
			m, err := decodeMemory(raw)
			if err != nil {
				return err
			}
			if grant.Reads(m.GetNamespace()) {
				resp.Versions++
				resp.SizeBytes += uint64(len(raw))
			}
		}
		return vrows.Err()
	})
	if err != nil {
		return nil, err
	}
	resp.ByReason, resp.ByNamespace = ops.SortedCounts(byReason), ops.SortedCounts(byNamespace)
	return resp, nil
}

// PurgeArchive deletes archive rows, their superseded versions and the
// archived links of the purged rows for good. It takes exactly one of an
// explicit cut-off (rows and versions archived before it) or explicit ids
// (their rows and versions); anything else is an error and purges
// nothing. Rows the caller may not read (another's inbox) are not purged
// (the engine's own schedule, authz.System, reads all). With dry_run
// it deletes nothing.
func (s *Store) PurgeArchive(ctx context.Context, req *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, error) {
	if err := ops.ValidatePurge(req); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.PurgeArchiveResponse
	if req.GetDryRun() {
		err := s.readTx(ctx, func(tx pgx.Tx) error {
			var err error
			resp, _, err = selectPurge(ctx, tx, req)
			return err
		})
		return resp, err
	}
	err := s.write(ctx, func(w *writeTx) error {
		var sel *purgeSelection
		var err error
		if resp, sel, err = selectPurge(ctx, w.tx, req); err != nil {
			return err
		}
		return sel.apply(w)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// purgeSelection is what a purge deletes: archive rows and versions.
type purgeSelection struct {
	rows       []string
	versionIDs []string
	versionAts []int64
}

func (p *purgeSelection) apply(w *writeTx) error {
	if len(p.rows) > 0 {
		// The rows' ends are gone for good, and their archived links with them.
		if err := w.deleteArchivedLinks(p.rows...); err != nil {
			return err
		}
		if _, err := w.tx.Exec(w.ctx, `DELETE FROM archived WHERE id = ANY($1)`, p.rows); err != nil {
			return err
		}
	}
	if len(p.versionIDs) > 0 {
		_, err := w.tx.Exec(w.ctx, `DELETE FROM versions WHERE (id, archived_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))`,
			p.versionIDs, p.versionAts)
		return err
	}
	return nil
}

// selectPurge finds what req purges and the answer reporting it.
func selectPurge(ctx context.Context, tx pgx.Tx, req *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, *purgeSelection, error) {
	resp, sel := &aimemoryv1.PurgeArchiveResponse{}, &purgeSelection{}
	grant := authz.Of(ctx)
	readable := func(a *storage.Archived) bool { return grant.Reads(a.Memory.GetNamespace()) }
	var purged []*storage.Archived
	// A version is deleted by its key time, which an imported version's own
	// time (what versionCols reads) may differ from.
	addVersions := func(where string, arg any) (bool, error) {
		rows, err := tx.Query(ctx, `SELECT `+versionKeyCols+` FROM versions WHERE `+where, arg)
		if err != nil {
			return false, err
		}
		defer rows.Close()
		found := false
		for rows.Next() {
			v, _, err := scanVersion(rows)
			if err != nil {
				return false, err
			}
			if grant.Reads(v.GetArchived().GetMemory().GetNamespace()) {
				sel.versionIDs, sel.versionAts, found = append(sel.versionIDs, v.GetArchived().GetMemory().GetId()), append(sel.versionAts, v.GetAt()), true
			}
		}
		return found, rows.Err()
	}
	if before := req.GetBefore(); before > 0 {
		rows, err := scanAll(ctx, tx, `SELECT `+archivedCols+` FROM archived WHERE archived_at < $1`, before)
		if err != nil {
			return nil, nil, err
		}
		for _, a := range rows {
			if readable(a) {
				purged, sel.rows = append(purged, a), append(sel.rows, a.Memory.GetId())
			}
		}
		if _, err := addVersions(`archived_at < $1`, before); err != nil {
			return nil, nil, err
		}
	} else {
		for _, id := range rules.Dedupe(append([]string(nil), req.GetIds()...)) {
			found := false
			a, err := scanArchived(tx.QueryRow(ctx, `SELECT `+archivedCols+` FROM archived WHERE id = $1`, id))
			if err != nil {
				return nil, nil, err
			}
			if a != nil && readable(a) {
				purged, sel.rows, found = append(purged, a), append(sel.rows, id), true
			}
			some, err := addVersions(`id = $1 ORDER BY archived_at`, id)
			if err != nil {
				return nil, nil, err
			}
			found = found || some
			if !found {
				resp.NotFound = append(resp.NotFound, id)
			}
		}
	}
	ops.PurgeAnswer(resp, purged, len(sel.versionIDs))
	return resp, sel, nil
}
