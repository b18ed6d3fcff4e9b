package ops

import (
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Typed record access over the backend's generic Record, EachRecord,
// PutRecord and DeleteRecords: the steps name a record kind, a backend
// stores any kind by its key.

// Records is the generic record access a step's typed helpers go through.
type Records interface {
	// Record reads the record of k (a kind PutRecord writes); nil when
	// there is none. In a write PostgreSQL locks a pending action's row:
	// racing approvers, on any engine, queue on it.
	Record(k Key) (*aimemoryv1.ExportRecord, error)
	// EachRecord visits the records of kind (ops.ExportKinds) as stored,
	// in key order, after the one whose key is after ("": from the first),
	// at most limit; key, the backend's, resumes after r. An entity is all
	// its alias rows.
	EachRecord(kind, after string, limit int, fn func(key string, r *aimemoryv1.ExportRecord) error) error
	// PutRecord writes r under its key, replacing any: every kind but a
	// memory (Tx.Put) and an entity (AddAlias), whose writes keep indexes
	// of their own. A subscription is written new, with no delivery
	// history, receiving the events logged after this transaction's own; a
	// refusal (ImportRefusal) when the backend cannot keep its sealed
	// secret. Over an existing one it keeps its start point and delivery
	// history, and writes that matched events against the old one retry.
	PutRecord(r *aimemoryv1.ExportRecord) error
	// DeleteRecords deletes the record of each key (none: nothing), of the
	// kinds PutRecord writes but a pending action; nothing else goes with
	// it (an archive row's links are the caller's) but a subscription's
	// delivery queue and dead letters.
	DeleteRecords(keys ...Key) error
}

// Key names one stored record: its kind and key. ID is the record's id (a
// memory's for archived and version, a namespace for a standard, a link's
// source); a version adds At, a link Target and Relation.
type Key struct {
	Kind             string
	ID               string
	At               int64
	Target, Relation string
}

// LinkRecordKey is l's key as a live or (kind KindArchivedLink) archived link.
func LinkRecordKey(kind string, l *aimemoryv1.Link) Key {
	return Key{Kind: kind, ID: l.GetSourceId(), Target: l.GetTargetId(), Relation: l.GetRelation()}
}

// The union records travel in, as Record answers them: nil for nil.

// LinkRecord is l as a record of kind (KindLink or KindArchivedLink).
func LinkRecord(kind string, l *aimemoryv1.Link) *aimemoryv1.ExportRecord {
	switch {
	case l == nil:
		return nil
	case kind == KindArchivedLink:
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_ArchivedLink{ArchivedLink: l}}
	}
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Link{Link: l}}
}

// ArchivedRecord is a as an archive row.
func ArchivedRecord(a *storage.Archived) *aimemoryv1.ExportRecord {
	if a == nil {
		return nil
	}
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Archived{Archived: ArchivedMessage(a)}}
}

// VersionRecord is a as the superseded version of its memory at at.
func VersionRecord(a *storage.Archived, at int64) *aimemoryv1.ExportRecord {
	if a == nil {
		return nil
	}
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: &aimemoryv1.SupersededVersion{Archived: ArchivedMessage(a), At: at}}}
}

// StandardRecord is st as a record.
func StandardRecord(st *aimemoryv1.Standard) *aimemoryv1.ExportRecord {
	if st == nil {
		return nil
	}
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Standard{Standard: st}}
}

// PendingRecord is p as a record.
func PendingRecord(p *aimemoryv1.PendingAction) *aimemoryv1.ExportRecord {
	if p == nil {
		return nil
	}
	return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Pending{Pending: p}}
}

// ArchivedOf is the archive row a wire message stands for (VersionAt unset).
func ArchivedOf(a *aimemoryv1.ArchivedMemory) *storage.Archived {
	return &storage.Archived{Memory: a.GetMemory(), ArchivedAt: a.GetArchivedAt(), Reason: a.GetReason(),
		OriginalTier: a.GetOriginalTier(), OriginalExpiresAt: a.GetOriginalExpiresAt()}
}

// Archived is id's archive row (a removed memory); nil when none.
func Archived(tx Records, id string) (*storage.Archived, error) {
	r, err := tx.Record(Key{Kind: KindArchived, ID: id})
	if r == nil || err != nil {
		return nil, err
	}
	return ArchivedOf(r.GetArchived()), nil
}

// Version is id's superseded version archived at at; nil when none.
func Version(tx Records, id string, at int64) (*storage.Archived, error) {
	r, err := tx.Record(Key{Kind: KindVersion, ID: id, At: at})
	if r == nil || err != nil {
		return nil, err
	}
	a := ArchivedOf(r.GetVersion().GetArchived())
	a.VersionAt = at
	return a, nil
}

// ReadLink reads the live link (source, target, relation); nil when absent.
func ReadLink(tx Records, source, target, relation string) (*aimemoryv1.Link, error) {
	r, err := tx.Record(Key{Kind: KindLink, ID: source, Target: target, Relation: relation})
	return r.GetLink(), err
}

// Pending reads pending action id (*storage.PendingNotFoundError when absent).
func Pending(tx Records, id string) (*aimemoryv1.PendingAction, error) {
	r, err := tx.Record(Key{Kind: KindPending, ID: id})
	if err == nil && r == nil {
		err = &storage.PendingNotFoundError{ID: id}
	}
	return r.GetPending(), err
}

// StandardsOf is the namespaces whose standard is one of ids, sorted
// (namespaces are the standards' keys).
func StandardsOf(tx Records, ids []string) ([]string, error) {
	var out []string
	err := tx.EachRecord(KindStandard, "", 0, func(_ string, r *aimemoryv1.ExportRecord) error {
		if slices.Contains(ids, r.GetStandard().GetStandardId()) {
			out = append(out, r.GetStandard().GetNamespace())
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}
