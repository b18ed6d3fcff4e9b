package boltstore

import (
	"context"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Stats counts every stored memory (expired-but-uncollected included), by
// tier and namespace (count desc, then key), those expiring in (now,
// now+1h], links, archive rows and their size, the keyword index's
// health, and the database file's size.
func (s *Store) Stats(ctx context.Context) (*aimemoryv1.StatsResponse, error) {
	resp, wide := ops.IndexStats(ctx, s.idx, s.nowNanos())
	err := s.db.View(func(tx *bolt.Tx) error {
		if !wide {
			return nil // store-wide counts are only for a grant of every namespace
		}
		resp.Links = uint64(tx.Bucket(bucketLinksOut).Stats().KeyN)
		resp.Stored = uint64(tx.Bucket(bucketMemories).Stats().KeyN)
		for _, b := range [][]byte{bucketArchive, bucketVersions} {
			err := tx.Bucket(b).ForEach(func(_, v []byte) error {
				resp.ArchiveSizeBytes += uint64(len(v))
				return nil
			})
			if err != nil {
				return err
			}
		}
		resp.Archived = uint64(tx.Bucket(bucketArchive).Stats().KeyN)
		resp.Versions = uint64(tx.Bucket(bucketVersions).Stats().KeyN)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(s.path); err == nil && wide {
		resp.DbSizeBytes = fi.Size()
	}
	return resp, nil
}
