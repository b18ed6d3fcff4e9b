package boltstore

import (
	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"

	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// maxAmbiguousIDs is how many candidates an ambiguous-prefix error lists.
const maxAmbiguousIDs = 10

// GetMemories reads memories by exact id or, with allow_prefix, by unique
// id prefix. Expired-but-uncollected memories are returned; nothing is
// touched. A prefix matching several memories fails the request with
// storage.ErrAmbiguous.
func (s *Store) GetMemories(ctx context.Context, req *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	resp := &aimemoryv1.GetMemoriesResponse{}
	readable := authz.Of(ctx).Reader()
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMemories)
		seen := map[string]bool{}
		for _, id := range req.GetIds() {
			raw := b.Get([]byte(id))
			if raw == nil && req.GetAllowPrefix() {
				var err error
				if raw, err = byPrefix(ctx, b, id); err != nil {
					return err
				}
			}
			var m *aimemoryv1.Memory
			if raw != nil {
				var err error
				if m, err = decodeLive(raw); err != nil {
					return err
				}
			}
			if m == nil || !readable(m.Namespace) {
				resp.NotFound = append(resp.NotFound, id) // another's inbox is not there for the caller
				continue
			}
			resp.Memories = append(resp.Memories, m)
		}
		if !req.GetIncludeLinks() {
			return nil
		}
		for _, m := range resp.Memories {
			var err error
			if resp.Links, err = linksOf(tx, m.Id, aimemoryv1.Direction_DIRECTION_BOTH, nil, seen, resp.Links); err != nil {
				return err
			}
		}
		var err error
		resp.Links, err = ops.ReadableLinks(resp.Links, ops.ReadableIDs(readable, func(id string) (string, error) {
			n, err := nodeSummary(b, id)
			return n.GetNamespace(), err
		}))
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// byPrefix is the record whose id uniquely starts with prefix among those
// the caller may read; nil if none. Keys are sorted, so the candidates are
// one cursor run.
func byPrefix(ctx context.Context, b *bolt.Bucket, prefix string) ([]byte, error) {
	var (
		ids   []string
		count int
		found []byte
	)
	c := b.Cursor()
	p := []byte(prefix)
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
		if n, err := nodeSummary(b, string(k)); err != nil {
			return nil, err
		} else if !authz.Of(ctx).Reads(n.Namespace) {
			continue
		}
		count++
		if len(ids) < maxAmbiguousIDs {
			ids = append(ids, string(k))
		}
		found = v
	}
	switch count {
	case 0:
		return nil, nil
	case 1:
		return bytes.Clone(found), nil
	}
	return nil, &storage.AmbiguousError{Prefix: prefix, IDs: ids, Count: count}
}

// records reads the memories of hits in order, skipping any deleted since
// the index was read.
func (s *Store) records(hits []index.Hit) ([]*aimemoryv1.Memory, error) {
	out := make([]*aimemoryv1.Memory, 0, len(hits))
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMemories)
		for _, h := range hits {
			raw := b.Get([]byte(h.ID))
			if raw == nil {
				continue
			}
			m, err := decodeLive(raw)
			if err != nil {
				return fmt.Errorf("memory %s: %w", h.ID, err)
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}
