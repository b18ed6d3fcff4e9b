package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The archive's rows as package records reads and deletes them, and its
// statistics, answered as boltstore answers them (the order is package
// ops', shared). Rows are read in one snapshot; what the caller may read
// is decided on the decoded record, as everywhere.

// archivedCols are an archive row's columns as scanArchived reads them;
// the last, a version's key time, is none for an archive row.
const archivedCols = `archived_at, reason, original_tier, original_expires_at, record, 0::bigint`

// versionCols are a superseded version's, in the same shape: its own
// time and reason where an import kept them apart from its key time
// (00006_vectors.sql), as boltstore's versions keep them, then the key time.
const versionCols = `coalesce(row_archived_at, archived_at), coalesce(reason, 'superseded'), original_tier, original_expires_at, record, archived_at`

// scanArchived reads one row of archivedCols (or versionCols); nil when there is none.
func scanArchived(row pgx.Row) (*storage.Archived, error) {
	a, err := scanRow(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return a, err
}

func scanRow(row pgx.Row) (*storage.Archived, error) {
	a := &storage.Archived{}
	var raw []byte
	err := row.Scan(&a.ArchivedAt, &a.Reason, &a.OriginalTier, &a.OriginalExpiresAt, &raw, &a.VersionAt)
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
		a, err := scanRow(rows)
		if err != nil {
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
// versions, archived before before when it is set (by the time indexes,
// 00003_archive.sql; a version's key time) (seam.Tx).
func (t opsTx) ArchiveRows(reason string, before int64, fn func(*storage.Archived) error) error {
	sql, where, args := `SELECT `+archivedCols+` FROM archived`, []string(nil), []any(nil)
	switch reason {
	case "":
	case storage.ArchiveReasonSuperseded:
		sql = `SELECT ` + versionCols + ` FROM versions`
	default:
		args = append(args, reason)
		where = append(where, fmt.Sprintf("reason = $%d", len(args)))
	}
	if before > 0 {
		args = append(args, before)
		where = append(where, fmt.Sprintf("archived_at < $%d", len(args)))
	}
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, ` AND `)
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
