package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// HasExpired reports whether any memory has expired (expires_at ≤ now,
// whatever its tier): one cursor seek on the expiry index.
func (s *Store) HasExpired(ctx context.Context) (bool, error) {
	now := s.nowNanos()
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketExpiry).Cursor().First()
		if k != nil {
			at, _ := splitExpiryKey(k)
			found = at <= now
		}
		return nil
	})
	return found, err
}

// CollectGarbage deletes every expired memory (with its links), first
// copying it into the archive when req.archive, all in one transaction.
// With nothing expired it writes nothing.
func (s *Store) CollectGarbage(ctx context.Context, req *aimemoryv1.CollectGarbageRequest) (*aimemoryv1.CollectGarbageResponse, error) {
	resp := &aimemoryv1.CollectGarbageResponse{}
	if expired, err := s.HasExpired(ctx); err != nil || !expired {
		return resp, err
	}
	err := s.write(ctx, func(w *writeTx) error {
		resp.Collected = nil
		var ids []string
		c := w.tx.Bucket(bucketExpiry).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			at, id := splitExpiryKey(k)
			if at > w.now {
				break
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			m, err := w.get(id)
			if err != nil {
				return err
			}
			if m == nil {
				return fmt.Errorf("expiry index names missing memory %s", id)
			}
			if req.GetArchive() {
				if err := w.archive(m, storage.ArchiveReasonTTL); err != nil {
					return err
				}
			}
			if err := w.remove(m, "memory_gc"); err != nil {
				return err
			}
			resp.Collected = append(resp.Collected, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// archive copies m into the archive, replacing an earlier copy of the id.
func (w *writeTx) archive(m *aimemoryv1.Memory, reason string) error {
	raw, err := encodeArchived(&storage.Archived{
		Memory:            m,
		ArchivedAt:        w.now,
		Reason:            reason,
		OriginalTier:      m.Tier,
		OriginalExpiresAt: m.ExpiresAt,
	})
	if err != nil {
		return err
	}
	return w.tx.Bucket(bucketArchive).Put([]byte(m.Id), raw)
}

// Archived returns the archive row of id; storage.ErrNotFound when there is none.
func (s *Store) Archived(ctx context.Context, id string) (*storage.Archived, error) {
	var a *storage.Archived
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketArchive).Get([]byte(id))
		if raw == nil {
			return fmt.Errorf("%w in archive: %s", storage.ErrNotFound, id)
		}
		var err error
		a, err = decodeArchived(raw)
		return err
	})
	return a, err
}
