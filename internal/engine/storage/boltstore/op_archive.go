package boltstore

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The archive. archive is the one operation every removal path goes
// through (gc, forget, delete with archive, later consolidate), and the
// one that keeps the version an update or a merging store replaced:
//
//   - a removal writes the whole record (metadata included) to the archive
//     bucket under its id, replacing an earlier archive row of that id,
//     moves every link touching it from links_out/in to
//     archived_links_out/in (same layout), and removes the live record
//     with its index entries. Live traversals read only the live link
//     buckets, so they never step into an archived memory; GetLinks with
//     include_archived reads both.
//   - a superseded version is written to versions under id NUL
//     archived_at; the live record and its links stay as they are.
//
// A link lives in exactly one place: live when both ends are live, else
// archived. Restore moves back the links whose other end is live and
// leaves the rest, so they come back when the other end does. A hard
// delete removes the memory's links in both places: an end that is gone
// for good takes its links with it.

// archive archives m for reason, with event typ for a removal.
func (w *writeTx) archive(m *aimemoryv1.Memory, reason, typ string) error {
	row, err := encodeArchived(&storage.Archived{
		Memory:            m,
		ArchivedAt:        w.now,
		Reason:            reason,
		OriginalTier:      m.Tier,
		OriginalExpiresAt: m.ExpiresAt,
	})
	if err != nil {
		return err
	}
	if reason == storage.ArchiveReasonSuperseded {
		versions := w.tx.Bucket(bucketVersions)
		at := w.now
		for versions.Get(versionKey(m.Id, at)) != nil { // two versions in one clock tick
			at++
		}
		return versions.Put(versionKey(m.Id, at), row)
	}
	if err := w.tx.Bucket(bucketArchive).Put([]byte(m.Id), row); err != nil {
		return err
	}
	if _, _, err := moveLinks(w.tx, m.Id, bucketLinksOut, bucketLinksIn, bucketArchivedLinksOut, bucketArchivedLinksIn, nil); err != nil {
		return err
	}
	return w.remove(m, typ)
}

// versionKey is id NUL archived_at: an id's versions sort oldest first.
func versionKey(id string, at int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(id), 0), uint64(at))
}

// versionKeyAt is the time of a versionKey.
func versionKeyAt(k []byte) int64 {
	if len(k) < 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(k[len(k)-8:]))
}

// moveLinks moves every link touching id from one pair of link buckets to
// the other, keeping those for which keep (if set) says false; it returns
// how many it moved and how many it kept.
func moveLinks(tx *bolt.Tx, id string, fromOut, fromIn, toOut, toIn []byte, move func(*aimemoryv1.Link) bool) (moved, kept int, err error) {
	srcOut, srcIn := tx.Bucket(fromOut), tx.Bucket(fromIn)
	links, err := collectLinks(srcOut, srcIn, id, aimemoryv1.Direction_DIRECTION_BOTH, nil, map[string]bool{}, nil)
	if err != nil {
		return 0, 0, err
	}
	dstOut, dstIn := tx.Bucket(toOut), tx.Bucket(toIn)
	for _, l := range links {
		if move != nil && !move(l) {
			kept++
			continue
		}
		if err := putLinkRows(dstOut, dstIn, l); err != nil {
			return 0, 0, err
		}
		if err := srcOut.Delete(linkKey(l.SourceId, l.TargetId, l.Relation)); err != nil {
			return 0, 0, err
		}
		if err := srcIn.Delete(linkKey(l.TargetId, l.SourceId, l.Relation)); err != nil {
			return 0, 0, err
		}
		moved++
	}
	return moved, kept, nil
}

// deleteArchivedLinks removes the archived links touching id: its end is
// gone for good.
func deleteArchivedLinks(tx *bolt.Tx, id string) error {
	out, in := tx.Bucket(bucketArchivedLinksOut), tx.Bucket(bucketArchivedLinksIn)
	links, err := collectLinks(out, in, id, aimemoryv1.Direction_DIRECTION_BOTH, nil, map[string]bool{}, nil)
	if err != nil {
		return err
	}
	for _, l := range links {
		if err := out.Delete(linkKey(l.SourceId, l.TargetId, l.Relation)); err != nil {
			return err
		}
		if err := in.Delete(linkKey(l.TargetId, l.SourceId, l.Relation)); err != nil {
			return err
		}
	}
	return nil
}

// archivedRow reads id's archive row; nil when there is none.
func archivedRow(tx *bolt.Tx, id string) (*storage.Archived, error) {
	raw := tx.Bucket(bucketArchive).Get([]byte(id))
	if raw == nil {
		return nil, nil
	}
	return decodeArchived(raw)
}

// The archive lifecycle's view of this backend (ops.ArchiveTx).

// Versions is id's superseded versions, oldest first (seam.Tx).
func (t opsTx) Versions(id string) ([]*storage.Archived, error) {
	var out []*storage.Archived
	prefix := append([]byte(id), 0)
	c := t.w.tx.Bucket(bucketVersions).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		a, err := decodeArchived(v)
		if err != nil {
			return nil, err
		}
		a.VersionAt = versionKeyAt(k)
		out = append(out, a)
	}
	return out, nil
}

func (t opsTx) ReviveLinks(id string) (revived, kept uint32, err error) {
	moved, k, err := moveLinks(t.w.tx, id, bucketArchivedLinksOut, bucketArchivedLinksIn, bucketLinksOut, bucketLinksIn,
		func(l *aimemoryv1.Link) bool { return t.w.isLive(otherEnd(l, id)) })
	return uint32(moved), uint32(k), err
}

func (t opsTx) RelinkArchived(from, to string) (moved, kept uint32, err error) {
	return t.w.relinkArchived(from, to)
}

var _ ops.ArchiveTx = opsTx{}
