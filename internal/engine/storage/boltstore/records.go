package boltstore

import (
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Record access by kind and key (seam.Tx): each kind's bucket, keyed as
// EachRecord scans it.

// Record reads the record of k; nil when none (ops.Records).
func (t opsTx) Record(k ops.Key) (*aimemoryv1.ExportRecord, error) {
	switch k.Kind {
	case ops.KindLink, ops.KindArchivedLink:
		out := bucketLinksOut
		if k.Kind == ops.KindArchivedLink {
			out = bucketArchivedLinksOut
		}
		if raw := t.w.tx.Bucket(out).Get(linkKey(k.ID, k.Target, k.Relation)); raw != nil {
			l, err := decodeLink(raw)
			return ops.LinkRecord(k.Kind, l), err
		}
	case ops.KindArchived:
		a, err := archivedRow(t.w.tx, k.ID)
		return ops.ArchivedRecord(a), err
	case ops.KindVersion:
		if raw := t.w.tx.Bucket(bucketVersions).Get(versionKey(k.ID, k.At)); raw != nil {
			a, err := decodeArchived(raw)
			return ops.VersionRecord(a, k.At), err
		}
	case ops.KindStandard:
		st, err := govView{tx: t.w.tx, cfg: t.w.s.gov}.Standard(k.ID)
		return ops.StandardRecord(st), err
	case ops.KindPending:
		if t.w.tx.Bucket(bucketPending).Get([]byte(k.ID)) != nil {
			p, err := getPending(t.w.tx, k.ID)
			return ops.PendingRecord(p), err
		}
	case ops.KindSubscription:
		sub, err := decodeSub(t.w.tx.Bucket(bucketSubs).Get([]byte(k.ID)))
		if sub == nil || err != nil {
			return nil, err
		}
		return ops.ExportedSubscription(sub), nil
	default:
		return nil, fmt.Errorf("read record: kind %q is read by its own method", k.Kind)
	}
	return nil, nil
}

// PutRecord writes r under its key, replacing any (ops.Records).
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
	case *aimemoryv1.ExportRecord_Subscription:
		return t.addSubscription(ops.SubscriptionOf(k.Subscription))
	}
	return fmt.Errorf("put record: %T is written by its own method", r.GetRecord())
}

// DeleteRecords deletes the record of each key (ops.Records).
func (t opsTx) DeleteRecords(keys ...ops.Key) error {
	for _, k := range keys {
		var err error
		switch k.Kind {
		case ops.KindLink:
			err = deleteLinkRows(t.w.tx.Bucket(bucketLinksOut), t.w.tx.Bucket(bucketLinksIn), keyLink(k))
		case ops.KindArchivedLink:
			err = deleteLinkRows(t.w.tx.Bucket(bucketArchivedLinksOut), t.w.tx.Bucket(bucketArchivedLinksIn), keyLink(k))
		case ops.KindArchived:
			err = t.w.tx.Bucket(bucketArchive).Delete([]byte(k.ID))
		case ops.KindVersion:
			err = t.w.tx.Bucket(bucketVersions).Delete(versionKey(k.ID, k.At))
		case ops.KindStandard:
			err = t.w.tx.Bucket(bucketStandards).Delete([]byte(k.ID))
		case ops.KindSubscription:
			err = deleteSubscription(t.w.tx, k.ID)
		default:
			err = fmt.Errorf("delete record: kind %q is deleted by its own method", k.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func keyLink(k ops.Key) *aimemoryv1.Link {
	return &aimemoryv1.Link{SourceId: k.ID, TargetId: k.Target, Relation: k.Relation}
}
