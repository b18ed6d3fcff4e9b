package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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

// Expired reads the expiry index up to now (seam.Tx).
func (t opsTx) Expired() ([]*aimemoryv1.Memory, error) {
	var out []*aimemoryv1.Memory
	mems := t.w.tx.Bucket(bucketMemories)
	c := t.w.tx.Bucket(bucketExpiry).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		at, id := splitExpiryKey(k)
		if at > t.w.now {
			break
		}
		raw := mems.Get([]byte(id))
		if raw == nil {
			return nil, fmt.Errorf("expiry index names missing memory %s", id)
		}
		m, err := decodeLive(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
