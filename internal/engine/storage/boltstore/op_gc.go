package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
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

// CollectGarbage removes every expired memory the caller may read,
// through the archive (reason ttl_expired, metadata and links kept) when
// req.archive, else for good, all in one transaction, and reports each by
// id, title and namespace. With dry_run, or with nothing of the caller's
// expired, it writes nothing. Not asked of the policy: the expiry is the
// memory's own.
func (s *Store) CollectGarbage(ctx context.Context, req *aimemoryv1.CollectGarbageRequest) (*aimemoryv1.CollectGarbageResponse, error) {
	resp := &aimemoryv1.CollectGarbageResponse{}
	if expired, err := s.HasExpired(ctx); err != nil || !expired {
		return resp, err
	}
	readable := authz.Of(ctx).Reader()
	// Read first: another's expired memories are no reason for a commit.
	err := s.db.View(func(tx *bolt.Tx) error {
		mems, err := expired(tx, s.nowNanos(), readable)
		for _, m := range mems {
			resp.Collected, resp.Memories = append(resp.Collected, m.Id), append(resp.Memories, ref(m))
		}
		return err
	})
	if err != nil || req.GetDryRun() || len(resp.Collected) == 0 {
		return resp, err
	}
	err = s.write(ctx, func(w *writeTx) error {
		resp = &aimemoryv1.CollectGarbageResponse{}
		mems, err := expired(w.tx, w.now, readable)
		if err != nil {
			return err
		}
		for _, m := range mems {
			if err := w.collect(m, req.GetArchive()); err != nil {
				return err
			}
			resp.Collected, resp.Memories = append(resp.Collected, m.Id), append(resp.Memories, ref(m))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// collect is garbage collection's removal of one expired memory.
func (w *writeTx) collect(m *aimemoryv1.Memory, archive bool) error {
	if archive {
		return w.archive(m, storage.ArchiveReasonTTL, storage.EventGC)
	}
	return w.removeForGood(m, storage.EventGC)
}

// expired reads every memory of a namespace readable allows whose expiry
// is at or before now, soonest first.
func expired(tx *bolt.Tx, now int64, readable func(ns string) bool) ([]*aimemoryv1.Memory, error) {
	var out []*aimemoryv1.Memory
	mems := tx.Bucket(bucketMemories)
	c := tx.Bucket(bucketExpiry).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		at, id := splitExpiryKey(k)
		if at > now {
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
		if readable(m.Namespace) {
			out = append(out, m)
		}
	}
	return out, nil
}
