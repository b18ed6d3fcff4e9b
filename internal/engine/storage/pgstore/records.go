package pgstore

import (
	"errors"
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Record access by kind and key (seam.Tx): each kind's table, keyed by
// its primary key.

// Record reads the record of k; nil when none (ops.Records). A pending
// action's row is locked in a write (getPending).
func (t opsTx) Record(k ops.Key) (*aimemoryv1.ExportRecord, error) {
	switch k.Kind {
	case ops.KindLink, ops.KindArchivedLink:
		table := liveLinks
		if k.Kind == ops.KindArchivedLink {
			table = archivedLinks
		}
		l, err := t.w.readLink(table, k.ID, k.Target, k.Relation)
		return ops.LinkRecord(k.Kind, l), err
	case ops.KindArchived:
		a, err := scanArchived(t.w.tx.QueryRow(t.w.ctx, `SELECT `+archivedCols+` FROM archived WHERE id = $1`, k.ID))
		return ops.ArchivedRecord(a), err
	case ops.KindVersion:
		a, err := scanArchived(t.w.tx.QueryRow(t.w.ctx, `SELECT `+versionCols+` FROM versions WHERE id = $1 AND archived_at = $2`, k.ID, k.At))
		return ops.VersionRecord(a, k.At), err
	case ops.KindStandard:
		st, err := govView{w: t.w}.Standard(k.ID)
		return ops.StandardRecord(st), err
	case ops.KindPending:
		p, err := t.w.getPending(k.ID)
		if none := (*storage.PendingNotFoundError)(nil); errors.As(err, &none) {
			return nil, nil
		}
		return ops.PendingRecord(p), err
	case ops.KindSubscription:
		sub, err := t.subscription(k.ID)
		if sub == nil || err != nil {
			return nil, err
		}
		return ops.ExportedSubscription(sub), nil
	}
	return nil, fmt.Errorf("read record: kind %q is read by its own method", k.Kind)
}

// PutRecord writes r under its key, replacing any (ops.Records).
func (t opsTx) PutRecord(r *aimemoryv1.ExportRecord) error {
	switch k := r.GetRecord().(type) {
	case *aimemoryv1.ExportRecord_Link:
		return t.w.writeLink(liveLinks, k.Link)
	case *aimemoryv1.ExportRecord_ArchivedLink:
		return t.w.writeLink(archivedLinks, k.ArchivedLink)
	case *aimemoryv1.ExportRecord_Archived:
		a := ops.ArchivedOf(k.Archived)
		raw, err := encodeMemory(a.Memory)
		if err != nil {
			return err
		}
		_, err = t.w.tx.Exec(t.w.ctx, `INSERT INTO archived (id, archived_at, reason, original_tier, original_expires_at, record) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO UPDATE SET archived_at = EXCLUDED.archived_at, reason = EXCLUDED.reason,
				original_tier = EXCLUDED.original_tier, original_expires_at = EXCLUDED.original_expires_at, record = EXCLUDED.record`,
			a.Memory.GetId(), a.ArchivedAt, a.Reason, a.OriginalTier, a.OriginalExpiresAt, raw)
		return err
	case *aimemoryv1.ExportRecord_Version:
		return t.putVersion(ops.ArchivedOf(k.Version.GetArchived()), k.Version.GetAt())
	case *aimemoryv1.ExportRecord_Standard:
		return t.w.putStandard(k.Standard)
	case *aimemoryv1.ExportRecord_Pending:
		return t.w.putPending(k.Pending)
	case *aimemoryv1.ExportRecord_Subscription:
		return t.addSubscription(ops.SubscriptionOf(k.Subscription))
	}
	return fmt.Errorf("put record: %T is written by its own method", r.GetRecord())
}

// putVersion keeps the row's own time and reason only where they are not
// the usual ones (its key time at, superseded).
func (t opsTx) putVersion(a *storage.Archived, at int64) error {
	raw, err := encodeMemory(a.Memory)
	if err != nil {
		return err
	}
	var rowAt *int64
	var reason *string
	if a.ArchivedAt != at {
		rowAt = &a.ArchivedAt
	}
	if a.Reason != storage.ArchiveReasonSuperseded {
		reason = &a.Reason
	}
	_, err = t.w.tx.Exec(t.w.ctx, `INSERT INTO versions (id, archived_at, original_tier, original_expires_at, record, row_archived_at, reason) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id, archived_at) DO UPDATE SET original_tier = EXCLUDED.original_tier, original_expires_at = EXCLUDED.original_expires_at,
			record = EXCLUDED.record, row_archived_at = EXCLUDED.row_archived_at, reason = EXCLUDED.reason`,
		a.Memory.GetId(), at, a.OriginalTier, a.OriginalExpiresAt, raw, rowAt, reason)
	return err
}

// DeleteRecords deletes the record of each key (ops.Records): one
// statement per kind.
func (t opsTx) DeleteRecords(keys ...ops.Key) error {
	byKind := map[string][]ops.Key{}
	for _, k := range keys {
		byKind[k.Kind] = append(byKind[k.Kind], k)
	}
	for kind, ks := range byKind {
		ids, ats, targets, relations := make([]string, len(ks)), make([]int64, len(ks)), make([]string, len(ks)), make([]string, len(ks))
		for i, k := range ks {
			ids[i], ats[i], targets[i], relations[i] = k.ID, k.At, k.Target, k.Relation
		}
		var err error
		switch kind {
		case ops.KindLink, ops.KindArchivedLink:
			table := liveLinks
			if kind == ops.KindArchivedLink {
				table = archivedLinks
			}
			_, err = t.w.tx.Exec(t.w.ctx, `DELETE FROM `+table+` WHERE (source_id, target_id, relation) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`, ids, targets, relations)
		case ops.KindArchived:
			_, err = t.w.tx.Exec(t.w.ctx, `DELETE FROM archived WHERE id = ANY($1)`, ids)
		case ops.KindVersion:
			_, err = t.w.tx.Exec(t.w.ctx, `DELETE FROM versions WHERE (id, archived_at) IN (SELECT * FROM unnest($1::text[], $2::bigint[]))`, ids, ats)
		case ops.KindStandard:
			_, err = t.w.tx.Exec(t.w.ctx, `DELETE FROM standards WHERE namespace = ANY($1)`, ids)
		case ops.KindSubscription:
			// Its deliveries and dead letters go by the foreign keys' cascade.
			if err = bumpSubs(t.w); err == nil {
				_, err = t.w.tx.Exec(t.w.ctx, `DELETE FROM subscriptions WHERE id = ANY($1)`, ids)
			}
		default:
			err = fmt.Errorf("delete record: kind %q is deleted by its own method", kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
