package pgstore

import (
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
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Export and Import are package records', over EachRecord and the
// record writes below.

// exportPage is a kind's rows after a key, in key order (keyset paging in
// one snapshot, Scan): the query, taking the key's columns then the limit
// (NULL: all), and the row's decoding with its key.
type exportPage struct {
	query string
	keys  int // the key's columns
	scan  func(pgx.Rows) (string, *aimemoryv1.ExportRecord, error)
}

// keyedPage is the page of a table of (key, record) rows.
func keyedPage(query string, decode func(key string, raw []byte) (*aimemoryv1.ExportRecord, error)) exportPage {
	return exportPage{query, 1, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
		var (
			key string
			raw []byte
		)
		if err := rows.Scan(&key, &raw); err != nil {
			return "", nil, err
		}
		r, err := decode(key, raw)
		return key, r, err
	}}
}

var exportPages = map[string]exportPage{
	ops.KindMemory: keyedPage(`SELECT id, record FROM memories WHERE id > $1 ORDER BY id LIMIT $2`, func(_ string, raw []byte) (*aimemoryv1.ExportRecord, error) {
		m, err := decodeMemory(raw)
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: m}}, err
	}),
	ops.KindArchived: {`SELECT id, archived_at, reason, original_tier, original_expires_at, record FROM archived WHERE id > $1 ORDER BY id LIMIT $2`, 1, func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
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
	// An entity is all its rows: a page is whole entities (eachEntity).
	ops.KindEntity: {`SELECT entity_id, alias, added_at, added_by FROM entity_aliases WHERE entity_id IN
		(SELECT DISTINCT entity_id FROM entity_aliases WHERE entity_id > $1 ORDER BY entity_id LIMIT $2) ORDER BY entity_id, folded`, 1, nil},
	ops.KindStandard: keyedPage(`SELECT namespace, record FROM standards WHERE namespace COLLATE "C" > $1 ORDER BY namespace COLLATE "C" LIMIT $2`, func(ns string, raw []byte) (*aimemoryv1.ExportRecord, error) {
		st := new(aimemoryv1.Standard)
		if err := proto.Unmarshal(raw, st); err != nil {
			return nil, fmt.Errorf("decode standard of %q: %w", ns, err)
		}
		return ops.StandardRecord(st), nil
	}),
	ops.KindPending: keyedPage(`SELECT id, record FROM pending WHERE id > $1 ORDER BY id LIMIT $2`, func(id string, raw []byte) (*aimemoryv1.ExportRecord, error) {
		p, err := decodePending(id, raw)
		return ops.PendingRecord(p), err
	}),
	// Without FromSeq or counters (ops.ExportedSubscription).
	ops.KindSubscription: keyedPage(`SELECT id, record FROM subscriptions WHERE id > $1 ORDER BY id LIMIT $2`, func(id string, raw []byte) (*aimemoryv1.ExportRecord, error) {
		sub := &storage.Subscription{}
		if err := json.Unmarshal(raw, sub); err != nil {
			return nil, errors.New("decode subscription " + id + ": " + err.Error())
		}
		return ops.ExportedSubscription(sub), nil
	}),
}

// linkPage is the page of a link table, by (source, target, relation).
func linkPage(table string) exportPage {
	return exportPage{`SELECT record FROM ` + table + ` WHERE (source_id, target_id, relation) > ($1, $2, $3) ORDER BY source_id, target_id, relation LIMIT $4`, 3,
		func(rows pgx.Rows) (string, *aimemoryv1.ExportRecord, error) {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				return "", nil, err
			}
			l, err := decodeLink(raw)
			if err != nil {
				return "", nil, err
			}
			kind := ops.KindLink
			if table == archivedLinks {
				kind = ops.KindArchivedLink
			}
			return pageKey(l.GetSourceId(), l.GetTargetId(), l.GetRelation()), ops.LinkRecord(kind, l), nil
		}}
}

// pageKey joins a key's columns; none holds a NUL (ids, relations).
func pageKey(cols ...string) string { return strings.Join(cols, "\x00") }

// EachRecord reads kind's page after after (keyset: its columns).
func (t opsTx) EachRecord(kind, after string, limit int, fn func(string, *aimemoryv1.ExportRecord) error) error {
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

// What Import writes with (seam.Tx; the rules are package records').

// Memories reads the ids' rows in one query.
func (t seamTx) Memories(ids []string) (map[string]*aimemoryv1.Memory, error) {
	out := make(map[string]*aimemoryv1.Memory, len(ids))
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT id, record FROM memories WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  string
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		if out[id], err = decodeMemory(raw); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// TitleOwners reads the keys' holders in one query.
func (t seamTx) TitleOwners(keys []seam.NSTitle) (map[seam.NSTitle]string, error) {
	out := make(map[seam.NSTitle]string, len(keys))
	nss, titles := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		nss[i], titles[i] = k.Namespace, k.Title
	}
	rows, err := t.w.tx.Query(t.w.ctx, `SELECT m.namespace, m.title, m.id FROM memories m
		JOIN unnest($1::text[], $2::text[]) AS q(ns, title) ON m.namespace = q.ns AND m.title = q.title`, nss, titles)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k  seam.NSTitle
			id string
		)
		if err := rows.Scan(&k.Namespace, &k.Title, &id); err != nil {
			return nil, err
		}
		out[k] = id
	}
	return out, rows.Err()
}

// ErrBackupUnsupported: Backup copies a bbolt file; a PostgreSQL database
// is backed up with its own tools.
var ErrBackupUnsupported = fmt.Errorf("backup: the postgres backend is backed up with pg_dump (or ai-memory export), not ai-memory backup: %w", errors.ErrUnsupported)

// Backup refuses: see ErrBackupUnsupported (capability storage.CapBackup).
func (s *Store) Backup(context.Context, io.Writer) (int64, error) {
	return 0, ErrBackupUnsupported
}
