package boltstore

import (
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Record access by kind and key (seam.Tx): each kind's bucket, keyed as
// EachRecord scans it.

// PutRecord writes r under its key, replacing any (ops.RecordWriter).
func (t opsTx) PutRecord(r *aimemoryv1.ExportRecord) error {
	switch k := r.GetRecord().(type) {
	case *aimemoryv1.ExportRecord_Link:
		return putLink(t.w.tx, k.Link)
	case *aimemoryv1.ExportRecord_ArchivedLink:
		return putLinkRows(t.w.tx.Bucket(bucketArchivedLinksOut), t.w.tx.Bucket(bucketArchivedLinksIn), k.ArchivedLink)
	case *aimemoryv1.ExportRecord_Archived:
		raw, err := encodeArchived(ops.ArchivedOf(k.Archived))
		if err != nil {
			return err
		}
		return t.w.tx.Bucket(bucketArchive).Put([]byte(k.Archived.GetMemory().GetId()), raw)
	case *aimemoryv1.ExportRecord_Version:
		raw, err := encodeArchived(ops.ArchivedOf(k.Version.GetArchived()))
		if err != nil {
			return err
		}
		return t.w.tx.Bucket(bucketVersions).Put(versionKey(k.Version.GetArchived().GetMemory().GetId(), k.Version.GetAt()), raw)
	case *aimemoryv1.ExportRecord_Standard:
		return putStandard(t.w.tx, k.Standard)
	case *aimemoryv1.ExportRecord_Pending:
		return t.w.putPending(k.Pending)
	}
	return fmt.Errorf("put record: %T is written by its own method", r.GetRecord())
}
