package boltstore

import (
	"bytes"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// ArchiveRows visits the archive rows of reason, or the superseded
// versions, archived before before when it is set (a version's key
// time), each time read before the row is decoded (seam.Tx).
func (t opsTx) ArchiveRows(reason string, before int64, fn func(*storage.Archived) error) error {
	bucket, versions := bucketArchive, reason == storage.ArchiveReasonSuperseded
	if versions {
		bucket, reason = bucketVersions, ""
	}
	return t.w.tx.Bucket(bucket).ForEach(func(k, v []byte) error {
		at := archivedAt(v)
		if versions {
			at = versionKeyAt(k)
		}
		if before > 0 && at >= before {
			return nil
		}
		a, err := decodeArchived(v)
		if err != nil || (reason != "" && a.Reason != reason) {
			return err
		}
		if versions {
			a.VersionAt = at
		}
		return fn(a)
	})
}

// archivedAt reads an encoded archive row's archived_at without decoding it.
func archivedAt(row []byte) int64 {
	if len(row) < 9 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(row[1:9]))
}

// VersionCounts is how many superseded versions each of ids has (seam.Tx).
func (t opsTx) VersionCounts(ids []string) (map[string]uint32, error) {
	counts := make(map[string]uint32, len(ids))
	for _, id := range ids {
		counts[id] = countVersions(t.w.tx, id)
	}
	return counts, nil
}

// countVersions is how many superseded versions of id are kept.
func countVersions(tx *bolt.Tx, id string) uint32 {
	var n uint32
	prefix := append([]byte(id), 0)
	c := tx.Bucket(bucketVersions).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}
