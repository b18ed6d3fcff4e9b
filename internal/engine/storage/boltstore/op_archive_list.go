package boltstore

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// ListArchived pages through the removed memories the caller may read,
// newest first, filtered by exact namespace and reason. Reason
// "superseded" lists the versions updates and merges replaced instead.
// Each listed row carries how many superseded versions its id has.
func (s *Store) ListArchived(ctx context.Context, req *aimemoryv1.ListArchivedRequest) (*aimemoryv1.ListArchivedResponse, error) {
	limit, err := ops.ArchiveListLimit(req)
	if err != nil {
		return nil, err
	}
	bucket := bucketArchive
	if req.GetReason() == storage.ArchiveReasonSuperseded {
		bucket = bucketVersions
	}
	resp := &aimemoryv1.ListArchivedResponse{}
	err = s.db.View(func(tx *bolt.Tx) error {
		var rows []*storage.Archived
		err := tx.Bucket(bucket).ForEach(func(_, v []byte) error {
			a, err := decodeArchived(v)
			if err != nil {
				return err
			}
			if !ops.ListedArchive(ctx, req, a) {
				return nil
			}
			rows = append(rows, a)
			return nil
		})
		if err != nil {
			return err
		}
		ops.SortArchived(rows)
		resp.Total = uint32(len(rows))
		off := min(int(req.GetOffset()), len(rows))
		for _, a := range rows[off:min(off+limit, len(rows))] {
			resp.Archived = append(resp.Archived, archivedMessage(a))
			resp.Versions = append(resp.Versions, countVersions(tx, a.Memory.GetId()))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
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
