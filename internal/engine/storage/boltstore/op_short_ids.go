package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// ShortIDs gives each id its shortest prefix, at least min_length long,
// that no other live or archived memory's id starts with. Keys are sorted,
// so only each id's neighbours in the two buckets need reading: the
// prefix must be one longer than the longest it shares with either.
func (s *Store) ShortIDs(ctx context.Context, req *aimemoryv1.ShortIdsRequest) (*aimemoryv1.ShortIdsResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	if n := req.GetMinLength(); n > record.MaxIDBytes {
		return nil, &record.FieldError{Field: "min_length", Rule: fmt.Sprintf("must be at most %d (got %d)", record.MaxIDBytes, n)}
	}
	resp := &aimemoryv1.ShortIdsResponse{Prefixes: make([]string, len(req.GetIds()))}
	err := s.db.View(func(tx *bolt.Tx) error {
		buckets := []*bolt.Bucket{tx.Bucket(bucketMemories), tx.Bucket(bucketArchive)}
		for i, id := range req.GetIds() {
			shared := 0
			for _, b := range buckets {
				shared = max(shared, sharedWithNeighbours(b, []byte(id)))
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

// sharedWithNeighbours is the longest prefix id shares with the keys of b
// just before and just after it (id itself excluded).
func sharedWithNeighbours(b *bolt.Bucket, id []byte) int {
	c := b.Cursor()
	shared := 0
	k, _ := c.Seek(id)
	next := k
	if next != nil && bytes.Equal(next, id) {
		next, _ = c.Next()
	}
	if next != nil {
		shared = commonPrefix(next, id)
	}
	var prev []byte
	if k == nil {
		prev, _ = c.Last()
	} else {
		c.Seek(id)
		prev, _ = c.Prev()
	}
	if prev != nil && !bytes.Equal(prev, id) {
		shared = max(shared, commonPrefix(prev, id))
	}
	return shared
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
