package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Archive list bounds (spec family-archive: default 50, cap 1000).
const (
	defaultArchiveLimit = 50
	maxArchiveLimit     = 1000
)

// ListArchived pages through the removed memories the caller may read,
// newest first, filtered by exact namespace and reason. Reason
// "superseded" lists the versions updates and merges replaced instead.
// Each listed row carries how many superseded versions its id has.
func (s *Store) ListArchived(ctx context.Context, req *aimemoryv1.ListArchivedRequest) (*aimemoryv1.ListArchivedResponse, error) {
	if r := req.GetReason(); r != "" && !slices.Contains(storage.ArchiveReasons, r) {
		return nil, &record.FieldError{Field: "reason", Rule: fmt.Sprintf("must be one of %v (got %s)", storage.ArchiveReasons, record.Quote(r))}
	}
	if req.GetLimit() > maxArchiveLimit {
		return nil, &record.FieldError{Field: "limit", Rule: fmt.Sprintf("must be from 1 to %d (got %d)", maxArchiveLimit, req.GetLimit())}
	}
	limit := int(cmp.Or(req.GetLimit(), defaultArchiveLimit))
	bucket := bucketArchive
	if req.GetReason() == storage.ArchiveReasonSuperseded {
		bucket = bucketVersions
	}
	resp := &aimemoryv1.ListArchivedResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		var rows []*storage.Archived
		err := tx.Bucket(bucket).ForEach(func(_, v []byte) error {
			a, err := decodeArchived(v)
			if err != nil {
				return err
			}
			ns := a.Memory.GetNamespace()
			if (req.GetNamespace() != "" && ns != req.GetNamespace()) ||
				(req.GetReason() != "" && a.Reason != req.GetReason()) || !storage.ReadableArchive(ctx, ns) {
				return nil
			}
			rows = append(rows, a)
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(rows, func(a, b *storage.Archived) int {
			return cmp.Or(cmp.Compare(b.ArchivedAt, a.ArchivedAt), cmp.Compare(a.Memory.GetId(), b.Memory.GetId()))
		})
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
