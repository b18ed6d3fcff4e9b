package boltstore

import (
	"bytes"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// ArchiveRows visits the archive rows of reason, or the superseded
// versions (seam.Tx).
func (t opsTx) ArchiveRows(reason string, fn func(*storage.Archived) error) error {
	bucket, versions := bucketArchive, reason == storage.ArchiveReasonSuperseded
	if versions {
		bucket, reason = bucketVersions, ""
	}
	return t.w.tx.Bucket(bucket).ForEach(func(k, v []byte) error {
		a, err := decodeArchived(v)
		if err != nil || (reason != "" && a.Reason != reason) {
			return err
		}
		if versions {
			a.VersionAt = versionKeyAt(k)
		}
		return fn(a)
	})
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
