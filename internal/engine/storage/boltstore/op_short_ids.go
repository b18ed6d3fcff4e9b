package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// ShortIDs gives each id its shortest prefix, at least min_length long,
// that no other live or archived memory's id the caller may read starts
// with (a prefix resolves among those only, and another tenant's ids are
// not to be probed through the lengths). Keys are sorted, so only each
// id's nearest readable neighbours in the two buckets need reading: the
// prefix must be one longer than the longest it shares with either.
func (s *Store) ShortIDs(ctx context.Context, req *aimemoryv1.ShortIdsRequest) (*aimemoryv1.ShortIdsResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	if n := req.GetMinLength(); n > record.MaxIDBytes {
		return nil, &record.FieldError{Field: "min_length", Rule: fmt.Sprintf("must be at most %d (got %d)", record.MaxIDBytes, n)}
	}
	readable := authz.Of(ctx).Reader()
	resp := &aimemoryv1.ShortIdsResponse{Prefixes: make([]string, len(req.GetIds()))}
	err := s.db.View(func(tx *bolt.Tx) error {
		buckets := []struct {
			b  *bolt.Bucket
			ns func(k, v []byte) (string, error) // the namespace of a row
		}{
			{tx.Bucket(bucketMemories), func(k, v []byte) (string, error) {
				n, err := liveSummary(string(k), v)
				return n.GetNamespace(), err
			}},
			{tx.Bucket(bucketArchive), func(k, v []byte) (string, error) {
				n, err := archivedSummary(string(k), v)
				return n.GetNamespace(), err
			}},
		}
		for i, id := range req.GetIds() {
			shared := 0
			for _, b := range buckets {
				n, err := sharedWithNeighbours(b.b, []byte(id), func(k, v []byte) (bool, error) {
					ns, err := b.ns(k, v)
					return err == nil && readable(ns), err
				})
				if err != nil {
					return err
				}
				shared = max(shared, n)
			}
			resp.Prefixes[i] = id[:min(len(id), max(int(req.GetMinLength()), shared+1))]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// sharedWithNeighbours is the longest prefix id shares with the nearest
// keys of b before and after it that visible accepts (id itself excluded).
func sharedWithNeighbours(b *bolt.Bucket, id []byte, visible func(k, v []byte) (bool, error)) (int, error) {
	shared := 0
	c := b.Cursor()
	for k, v := c.Seek(id); k != nil; k, v = c.Next() {
		if bytes.Equal(k, id) {
			continue
		}
		if ok, err := visible(k, v); err != nil {
			return 0, err
		} else if ok {
			shared = commonPrefix(k, id)
			break
		}
	}
	k, v := c.Seek(id)
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	for ; k != nil; k, v = c.Prev() {
		if bytes.Equal(k, id) {
			continue
		}
		if ok, err := visible(k, v); err != nil {
			return 0, err
		} else if ok {
			shared = max(shared, commonPrefix(k, id))
			break
		}
	}
	return shared, nil
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
