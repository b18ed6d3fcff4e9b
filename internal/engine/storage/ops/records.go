package ops

import (
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Typed record access over the backend's generic PutRecord: the steps
// name a record kind, a backend stores any kind by its key.

// RecordWriter is the generic writes a step's typed helpers go through.
type RecordWriter interface {
	// PutRecord writes r under its key, replacing any: every kind but a
	// memory (Tx.Put), an entity (AddAlias) and a subscription
	// (AddSubscription), whose writes keep indexes or secrets of their own.
	PutRecord(r *aimemoryv1.ExportRecord) error
	// DeleteRecords deletes the record of each key (none: nothing), of the
	// kinds PutRecord writes but a pending action (never deleted); nothing
	// else goes with it (an archive row's links are the caller's).
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

// WriteLink writes l as the live link of its key, replacing any.
func WriteLink(tx RecordWriter, l *aimemoryv1.Link) error {
	return tx.PutRecord(&aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Link{Link: l}})
}

// PutPending writes p over the row of its id.
func PutPending(tx RecordWriter, p *aimemoryv1.PendingAction) error {
	return tx.PutRecord(&aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Pending{Pending: p}})
}

// PutStandard writes st as its namespace's standard.
func PutStandard(tx RecordWriter, st *aimemoryv1.Standard) error {
	return tx.PutRecord(&aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Standard{Standard: st}})
}

// ArchivedOf is the archive row a wire message stands for (VersionAt unset).
func ArchivedOf(a *aimemoryv1.ArchivedMemory) *storage.Archived {
	return &storage.Archived{Memory: a.GetMemory(), ArchivedAt: a.GetArchivedAt(), Reason: a.GetReason(),
		OriginalTier: a.GetOriginalTier(), OriginalExpiresAt: a.GetOriginalExpiresAt()}
}
