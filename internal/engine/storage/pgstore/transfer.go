package pgstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Import, record kind for kind as boltstore's (transfer.go there): the
// same refusals, the same outcomes. Memories, archived memories and
// versions are here; the graph's, governance's and subscriptions' kinds
// are their owners' (importLink, ...). Export is package records', over
// EachRecord.

// exportPages are each kind's rows after a key, in key order (keyset
// paging in one snapshot, Scan): the query, taking the key's columns then
// the limit (NULL: all), and the row's decoding with its key.
var exportPages = map[string]struct {
	query string
	keys  int // the key's columns
	scan  func(pgx.Rows) (string, *aimemoryv1.ExportRecord, error)
}{
	ops.KindMemory: {`SELECT id, record FROM memories WHERE id > $1 ORDER BY id LIMIT $2`, 1, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return "", nil, err
		}
		m, err := decodeMemory(raw)
		return id, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: m}}, err
	}},
	ops.KindArchived: {`SELECT id, ` + archivedCols + ` FROM archived WHERE id > $1 ORDER BY id LIMIT $2`, 1, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
		var (
			id  string
			raw []byte
		)
		a := &aimemoryv1.ArchivedMemory{}
		if err := rows.Scan(&id, &a.ArchivedAt, &a.Reason, &a.OriginalTier, &a.OriginalExpiresAt, &raw); err != nil {
			return "", nil, err
		}
		var err error
		a.Memory, err = decodeMemory(raw)
		return id, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Archived{Archived: a}}, err
	}},
	ops.KindVersion: {`SELECT ` + versionKeyCols + ` FROM versions WHERE (id, archived_at) > ($1, $2) ORDER BY id, archived_at LIMIT $3`, 2, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
		v, _, err := scanVersion(rows)
		if err != nil {
			return "", nil, err
		}
		return pageKey(v.Archived.Memory.GetId(), strconv.FormatInt(v.At, 10)), &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: v}}, nil
	}},
	ops.KindLink:         linkPage(liveLinks),
	ops.KindArchivedLink: linkPage(archivedLinks),
	// An entity is all its rows: a page is whole entities.
	ops.KindEntity: {`SELECT entity_id, alias, added_at, added_by FROM entity_aliases WHERE entity_id IN
		(SELECT DISTINCT entity_id FROM entity_aliases WHERE entity_id > $1 ORDER BY entity_id LIMIT $2) ORDER BY entity_id, folded`, 1, nil},
	ops.KindStandard: {`SELECT namespace, record FROM standards WHERE namespace COLLATE "C" > $1 ORDER BY namespace COLLATE "C" LIMIT $2`, 1, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
		var (
			ns  string
			raw []byte
		)
		if err := rows.Scan(&ns, &raw); err != nil {
			return "", nil, err
		}
		st := new(aimemoryv1.Standard)
		if err := proto.Unmarshal(raw, st); err != nil {
			return "", nil, fmt.Errorf("decode standard of %q: %w", ns, err)
		}
		return ns, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Standard{Standard: st}}, nil
	}},
	ops.KindPending: {`SELECT id, record FROM pending WHERE id > $1 ORDER BY id LIMIT $2`, 1, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return "", nil, err
		}
		p, err := decodePending(id, raw)
		return id, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Pending{Pending: p}}, err
	}},
	// Without FromSeq or counters (ops.ExportedSubscription).
	ops.KindSubscription: {`SELECT id, record FROM subscriptions WHERE id > $1 ORDER BY id LIMIT $2`, 1, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return "", nil, err
		}
		sub := &storage.Subscription{}
		if err := json.Unmarshal(raw, sub); err != nil {
			return "", nil, errors.New("decode subscription " + id + ": " + err.Error())
		}
		return id, ops.ExportedSubscription(sub), nil
	}},
}

// linkPage is the page of a link table, by (source, target, relation).
func linkPage(table string) struct {
	query string
	keys  int
	scan  func(pgx.Rows) (string, *aimemoryv1.ExportRecord, error)
} {
	return struct {
		query string
		keys  int
		scan  func(pgx.Rows) (string, *aimemoryv1.ExportRecord, error)
	}{`SELECT record FROM ` + table + ` WHERE (source_id, target_id, relation) > ($1, $2, $3) ORDER BY source_id, target_id, relation LIMIT $4`, 3,
		func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				return "", nil, err
			}
			l, err := decodeLink(raw)
			if err != nil {
				return "", nil, err
			}
			r := &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Link{Link: l}}
			if table == archivedLinks {
				r = &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_ArchivedLink{ArchivedLink: l}}
			}
			return pageKey(l.GetSourceId(), l.GetTargetId(), l.GetRelation()), r, nil
		}}
}

// pageKey joins a key's columns; none holds a NUL (ids, relations).
func pageKey(cols ...string) string { return strings.Join(cols, "\x00") }

// EachRecord reads kind's page after after (keyset: its columns).
func (t seamTx) EachRecord(kind, after string, limit int, fn func(string, *aimemoryv1.ExportRecord) error) error {
	page, ok := exportPages[kind]
	if !ok {
		return fmt.Errorf("export: no record kind %q", kind)
	}
	args := make([]any, page.keys, page.keys+1)
	for i := range args {
		args[i] = ""
	}
	if kind == ops.KindVersion {
		args[1] = int64(math.MinInt64)
	}
	if after != "" {
		cols := strings.Split(after, "\x00")
		if len(cols) != page.keys {
			return fmt.Errorf("export: %s key %q", kind, after)
		}
		for i, c := range cols {
			args[i] = c
		}
		if kind == ops.KindVersion {
			at, err := strconv.ParseInt(cols[1], 10, 64)
			if err != nil {
				return fmt.Errorf("export: version key %q", after)
			}
			args[1] = at
		}
	}
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := t.w.tx.Query(t.w.ctx, page.query, append(args, lim)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if kind == ops.KindEntity {
		return eachEntity(rows, fn)
	}
	for rows.Next() {
		key, r, err := page.scan(rows)
		if err != nil {
			return err
		}
		if err := fn(key, r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// eachEntity groups alias rows (by entity id, then folded form) into entities.
func eachEntity(rows pgx.Rows, fn func(string, *aimemoryv1.ExportRecord) error) error {
	var e *aimemoryv1.EntityAliases
	flush := func() error {
		if e == nil {
			return nil
		}
		return fn(e.Id, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Entity{Entity: e}})
	}
	for rows.Next() {
		var id string
		a := &aimemoryv1.EntityAlias{}
		if err := rows.Scan(&id, &a.Alias, &a.AddedAt, &a.AddedBy); err != nil {
			return err
		}
		if e == nil || e.Id != id {
			if err := flush(); err != nil {
				return err
			}
			e = &aimemoryv1.EntityAliases{Id: id}
		}
		e.Aliases = append(e.Aliases, a)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}

// versionKeyCols read a versions row as boltstore keeps it: its key time
// (at), and the row's own time and reason (00006_vectors.sql).
const versionKeyCols = `archived_at, coalesce(row_archived_at, archived_at), coalesce(reason, 'superseded'), original_tier, original_expires_at, record`

func scanVersion(row pgx.Row) (*aimemoryv1.SupersededVersion, []byte, error) {
	a := &aimemoryv1.ArchivedMemory{}
	v := &aimemoryv1.SupersededVersion{Archived: a}
	var raw []byte
	if err := row.Scan(&v.At, &a.ArchivedAt, &a.Reason, &a.OriginalTier, &a.OriginalExpiresAt, &raw); err != nil {
		return nil, nil, err
	}
	var err error
	a.Memory, err = decodeMemory(raw)
	return v, raw, err
}

// Import writes records in one transaction: each is created, found
// identical (unchanged), or refused with the reason, which writes nothing
// of it. Records are read in order, so a link may follow its memories in
// the same batch. A run that loses a race with another engine is rerun
// whole (write), its results afresh.
func (s *Store) Import(ctx context.Context, records []*aimemoryv1.ExportRecord) ([]*aimemoryv1.ImportResult, error) {
	var results []*aimemoryv1.ImportResult
	err := s.write(ctx, func(w *writeTx) error {
		results = make([]*aimemoryv1.ImportResult, len(records))
		im, err := w.prefetch(records)
		if err != nil {
			return err
		}
		for i, r := range records {
			outcome, err := ops.ImportRecord(im, r)
			if err != nil {
				if !ops.IsRefusal(err) {
					return err
				}
				results[i] = &aimemoryv1.ImportResult{Outcome: "refused", Error: err.Error()}
				continue
			}
			results[i] = &aimemoryv1.ImportResult{Outcome: outcome}
		}
		return nil
	})
	return results, err
}

// importer is one import run: its transaction, with what the batch's
// memories find there read up front in two queries (prefetch), not four
// round trips a memory: each memory's row by id and each (namespace,
// title)'s holder, kept up to date as the batch creates memories.
type importer struct {
	*writeTx
	live   map[string]*aimemoryv1.Memory // id → its record; nil: not there
	titles map[nsTitle]string            // → the id holding it; absent: free
}

type nsTitle struct{ ns, title string }

func (w *writeTx) prefetch(records []*aimemoryv1.ExportRecord) (*importer, error) {
	im := &importer{writeTx: w, live: map[string]*aimemoryv1.Memory{}, titles: map[nsTitle]string{}}
	var ids, nss, titles []string
	for _, r := range records {
		if m := r.GetMemory(); m != nil {
			ids, nss, titles = append(ids, m.GetId()), append(nss, m.GetNamespace()), append(titles, m.GetTitle())
		}
	}
	if len(ids) == 0 {
		return im, nil
	}
	rows, err := w.tx.Query(w.ctx, `SELECT id, record FROM memories WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return nil, err
		}
		if im.live[id], err = decodeMemory(raw); err != nil {
			rows.Close()
			return nil, err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = w.tx.Query(w.ctx, `SELECT m.namespace, m.title, m.id FROM memories m
		JOIN unnest($1::text[], $2::text[]) AS q(ns, title) ON m.namespace = q.ns AND m.title = q.title`, nss, titles)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k nsTitle
		var id string
		if err := rows.Scan(&k.ns, &k.title, &id); err != nil {
			return nil, err
		}
		im.titles[k] = id
	}
	return im, rows.Err()
}

func (im *importer) ImportMemory(m *aimemoryv1.Memory) (string, error) {
	if err := rules.ValidImported(m); err != nil {
		return "", ops.Refuse(err)
	}
	if old := im.live[m.GetId()]; old != nil {
		if proto.Equal(old, m) {
			return "unchanged", nil
		}
		return "", ops.Refusef("memory %s exists with other content; import does not overwrite", m.GetId())
	}
	k := nsTitle{m.GetNamespace(), m.GetTitle()}
	if owner := im.titles[k]; owner != "" {
		return "", ops.Refusef("title %s in namespace %s is taken by memory %s", record.Quote(m.GetTitle()), record.Quote(m.GetNamespace()), owner)
	}
	c := proto.Clone(m).(*aimemoryv1.Memory)
	if err := im.put(nil, c, storage.EventImport); err != nil {
		return "", err
	}
	im.live[c.GetId()], im.titles[k] = c, c.GetId()
	return "created", nil
}

func (w *writeTx) ImportArchived(a *aimemoryv1.ArchivedMemory) (string, error) {
	m := a.GetMemory()
	if m == nil {
		return "", ops.Refusef("archived record without its memory")
	}
	if err := rules.ValidImported(m); err != nil {
		return "", ops.Refuse(err)
	}
	if live, err := w.get(m.GetId()); err != nil {
		return "", err
	} else if live != nil {
		return "", ops.Refusef("archived memory %s is also a live memory here", m.GetId())
	}
	raw, err := encodeMemory(m)
	if err != nil {
		return "", err
	}
	old := &aimemoryv1.ArchivedMemory{}
	var oldRaw []byte
	err = w.tx.QueryRow(w.ctx, `SELECT archived_at, reason, original_tier, original_expires_at, record FROM archived WHERE id = $1`, m.GetId()).
		Scan(&old.ArchivedAt, &old.Reason, &old.OriginalTier, &old.OriginalExpiresAt, &oldRaw)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return "", err
	case old.ArchivedAt == a.GetArchivedAt() && old.Reason == a.GetReason() && old.OriginalTier == a.GetOriginalTier() &&
		old.OriginalExpiresAt == a.GetOriginalExpiresAt() && bytes.Equal(oldRaw, raw):
		return "unchanged", nil
	default:
		return "", ops.Refusef("archived memory %s exists with other content; import does not overwrite", m.GetId())
	}
	_, err = w.tx.Exec(w.ctx, `INSERT INTO archived (id, archived_at, reason, original_tier, original_expires_at, record) VALUES ($1, $2, $3, $4, $5, $6)`,
		m.GetId(), a.GetArchivedAt(), a.GetReason(), a.GetOriginalTier(), a.GetOriginalExpiresAt(), raw)
	return "created", err
}

// importVersion writes a superseded version under its place among its
// id's versions. The live record need not be here: a version outlives
// its memory, as in the store it came from.
func (w *writeTx) ImportVersion(v *aimemoryv1.SupersededVersion) (string, error) {
	a := v.GetArchived()
	m := a.GetMemory()
	if m == nil {
		return "", ops.Refusef("version record without its memory")
	}
	if err := rules.ValidImported(m); err != nil {
		return "", ops.Refuse(err)
	}
	if v.GetAt() <= 0 {
		return "", ops.Refusef("version of %s: at must be set", m.GetId())
	}
	raw, err := encodeMemory(m)
	if err != nil {
		return "", err
	}
	old, oldRaw, err := scanVersion(w.tx.QueryRow(w.ctx, `SELECT `+versionKeyCols+` FROM versions WHERE id = $1 AND archived_at = $2`, m.GetId(), v.GetAt()))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return "", err
	case old.Archived.ArchivedAt == a.GetArchivedAt() && old.Archived.Reason == a.GetReason() && old.Archived.OriginalTier == a.GetOriginalTier() &&
		old.Archived.OriginalExpiresAt == a.GetOriginalExpiresAt() && bytes.Equal(oldRaw, raw):
		return "unchanged", nil
	default:
		return "", ops.Refusef("version of %s at %d exists with other content; import does not overwrite", m.GetId(), v.GetAt())
	}
	// The row's own time and reason only where they are not the usual ones.
	var rowAt *int64
	var reason *string
	if at := a.GetArchivedAt(); at != v.GetAt() {
		rowAt = &at
	}
	if r := a.GetReason(); r != storage.ArchiveReasonSuperseded {
		reason = &r
	}
	_, err = w.tx.Exec(w.ctx, `INSERT INTO versions (id, archived_at, original_tier, original_expires_at, record, row_archived_at, reason) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		m.GetId(), v.GetAt(), a.GetOriginalTier(), a.GetOriginalExpiresAt(), raw, rowAt, reason)
	return "created", err
}

// ErrBackupUnsupported: Backup copies a bbolt file; a PostgreSQL database
// is backed up with its own tools.
var ErrBackupUnsupported = fmt.Errorf("backup: the postgres backend is backed up with pg_dump (or ai-memory export), not ai-memory backup: %w", errors.ErrUnsupported)

// Backup refuses: see ErrBackupUnsupported (capability storage.CapBackup).
func (s *Store) Backup(context.Context, io.Writer) (int64, error) {
	return 0, ErrBackupUnsupported
}
