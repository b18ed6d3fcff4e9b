package boltstore

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ArchiveStats counts the archive rows the caller may read by reason and
// namespace (count desc, then key), with the oldest and newest archived_at,
// the encoded size of rows and superseded versions, and the versions kept
// (of the caller's namespaces too).
func (s *Store) ArchiveStats(ctx context.Context) (*aimemoryv1.ArchiveStatsResponse, error) {
	resp := &aimemoryv1.ArchiveStatsResponse{}
	byReason, byNamespace := map[string]uint64{}, map[string]uint64{}
	grant := authz.Of(ctx)
	readable := grant.Reader()
	err := s.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketArchive).ForEach(func(_, v []byte) error {
			a, err := decodeArchived(v)
			if err != nil {
				return err
			}
			ns := a.Memory.GetNamespace()
			if !readable(ns) {
				return nil
			}
			resp.Total++
			resp.SizeBytes += uint64(len(v))
			byReason[a.Reason]++
			byNamespace[ns]++
			if resp.OldestAt == 0 || a.ArchivedAt < resp.OldestAt {
				resp.OldestAt = a.ArchivedAt
			}
			resp.NewestAt = max(resp.NewestAt, a.ArchivedAt)
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketVersions).ForEach(func(k, v []byte) error {
			if !grant.Everything() { // else every namespace's versions count
				n, err := archivedSummary(string(k), v)
				if err != nil || !readable(n.Namespace) {
					return err
				}
			}
			resp.Versions++
			resp.SizeBytes += uint64(len(v))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	resp.ByReason, resp.ByNamespace = sortedCounts(byReason), sortedCounts(byNamespace)
	return resp, nil
}

// sortedCounts is counts as a list, count desc, then key.
func sortedCounts(counts map[string]uint64) []*aimemoryv1.CountByKey { return ops.SortedCounts(counts) }
