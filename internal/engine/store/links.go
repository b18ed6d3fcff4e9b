package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Links are stored once by source (links_out, with the Link as value) and
// mirrored by target (links_in) so both directions are a prefix scan.
// Link writes arrive with a later issue; putLink is what tests use now.
func putLink(tx *bolt.Tx, l *aimemoryv1.Link) error {
	raw, err := proto.Marshal(l)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketLinksOut).Put(linkKey(l.GetSourceId(), l.GetTargetId(), l.GetRelation()), raw); err != nil {
		return err
	}
	return tx.Bucket(bucketLinksIn).Put(linkKey(l.GetTargetId(), l.GetSourceId(), l.GetRelation()), nil)
}

// prefixKeys copies the keys of b that start with prefix.
func prefixKeys(b *bolt.Bucket, prefix []byte) [][]byte {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	return keys
}

// deleteLinks removes every link from or to id, in both buckets.
func deleteLinks(tx *bolt.Tx, id string) error {
	out, in := tx.Bucket(bucketLinksOut), tx.Bucket(bucketLinksIn)
	for _, dir := range []struct {
		own, mirror *bolt.Bucket
	}{{out, in}, {in, out}} {
		for _, k := range prefixKeys(dir.own, idPrefix(id)) {
			a, b, rel, ok := splitLinkKey(k)
			if !ok {
				return fmt.Errorf("corrupt link key %q", k)
			}
			if err := dir.own.Delete(k); err != nil {
				return err
			}
			if err := dir.mirror.Delete(linkKey(b, a, rel)); err != nil {
				return err
			}
		}
	}
	return nil
}

// linksOf appends the links of id in the given direction to dst, skipping
// ones already in seen (keyed by their links_out key).
func linksOf(tx *bolt.Tx, id string, dir aimemoryv1.Direction, seen map[string]bool, dst []*aimemoryv1.Link) ([]*aimemoryv1.Link, error) {
	out, in := tx.Bucket(bucketLinksOut), tx.Bucket(bucketLinksIn)
	var keys [][]byte // links_out keys
	if dir != aimemoryv1.Direction_DIRECTION_IN {
		keys = prefixKeys(out, idPrefix(id))
	}
	if dir != aimemoryv1.Direction_DIRECTION_OUT {
		for _, k := range prefixKeys(in, idPrefix(id)) {
			target, source, rel, ok := splitLinkKey(k)
			if !ok {
				return nil, fmt.Errorf("corrupt link key %q", k)
			}
			keys = append(keys, linkKey(source, target, rel))
		}
	}
	for _, k := range keys {
		if seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		raw := out.Get(k)
		if raw == nil {
			return nil, fmt.Errorf("link %q has no links_out row", k)
		}
		l := new(aimemoryv1.Link)
		if err := proto.Unmarshal(raw, l); err != nil {
			return nil, fmt.Errorf("decode link: %w", err)
		}
		dst = append(dst, l)
	}
	return dst, nil
}

// GetLinks returns the links of a set of memories in one call.
func (s *Store) GetLinks(ctx context.Context, req *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	if err := validateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	dir := req.GetDirection()
	if !slices.Contains([]aimemoryv1.Direction{
		aimemoryv1.Direction_DIRECTION_UNSPECIFIED, aimemoryv1.Direction_DIRECTION_OUT,
		aimemoryv1.Direction_DIRECTION_IN, aimemoryv1.Direction_DIRECTION_BOTH,
	}, dir) {
		return nil, &record.FieldError{Field: "direction", Rule: fmt.Sprintf("must be OUT, IN or BOTH (got %d)", dir)}
	}
	resp := &aimemoryv1.GetLinksResponse{}
	err := s.db.View(func(tx *bolt.Tx) error {
		seen := map[string]bool{}
		for _, id := range req.GetIds() {
			var err error
			if resp.Links, err = linksOf(tx, id, dir, seen, resp.Links); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
