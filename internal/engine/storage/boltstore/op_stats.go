package boltstore

import (
	"cmp"
	"context"
	"os"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// expiringSoon is the window of StatsResponse.expiring_soon.
const expiringSoon = time.Hour

// Stats counts every stored memory (expired-but-uncollected included), by
// tier and namespace (count desc, then key), those expiring in (now,
// now+1h], links, archive rows and their size, the keyword index's
// health, and the database file's size.
func (s *Store) Stats(ctx context.Context) (*aimemoryv1.StatsResponse, error) {
	now := s.nowNanos()
	resp := &aimemoryv1.StatsResponse{}
	var visible func(string) bool
	c, scoped := caller.FromContext(ctx)
	if scoped = scoped && c.Scope != ""; scoped {
		visible = c.InScope // another tenant's namespaces are not even named
	}
	t := s.idx.Tally(now, int64(expiringSoon), visible)
	resp.Total, resp.ExpiringSoon = t.Total, t.ExpiringSoon
	resp.Indexed, resp.IndexTerms, resp.IndexPostingsBytes = t.Total, t.Terms, t.PostingBytes
	for i, n := range t.ByTier {
		if n > 0 {
			resp.ByTier = append(resp.ByTier, &aimemoryv1.CountByKey{Key: record.Tiers[i], Count: n})
		}
	}
	for ns, n := range t.ByNamespace {
		if !storage.Readable(ctx, ns) { // another's inbox: not even its name
			continue
		}
		resp.ByNamespace = append(resp.ByNamespace, &aimemoryv1.CountByKey{Key: ns, Count: n})
	}
	for _, l := range [][]*aimemoryv1.CountByKey{resp.ByTier, resp.ByNamespace} {
		slices.SortFunc(l, func(a, b *aimemoryv1.CountByKey) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
		})
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		if scoped {
			return nil // store-wide counts are not a scoped caller's to see
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
	if fi, err := os.Stat(s.path); err == nil && !scoped {
		resp.DbSizeBytes = fi.Size()
	}
	return resp, nil
}
