package boltstore

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func decodeLink(raw []byte) (*aimemoryv1.Link, error) {
	l := new(aimemoryv1.Link)
	if err := proto.Unmarshal(raw, l); err != nil {
		return nil, fmt.Errorf("decode link: %w", err)
	}
	return l, nil
}

// Links are stored once by source (links_out, with the Link as value) and
// mirrored by target (links_in) so both directions are a prefix scan.
// putLink writes both rows (the graph operations are in graph_links.go).
func putLink(tx *bolt.Tx, l *aimemoryv1.Link) error {
	return putLinkRows(tx.Bucket(bucketLinksOut), tx.Bucket(bucketLinksIn), l)
}

// putLinkRows writes l's two rows into a pair of link buckets (live or archived).
func putLinkRows(out, in *bolt.Bucket, l *aimemoryv1.Link) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(l)
	if err != nil {
		return err
	}
	if err := out.Put(linkKey(l.GetSourceId(), l.GetTargetId(), l.GetRelation()), raw); err != nil {
		return err
	}
	return in.Put(linkKey(l.GetTargetId(), l.GetSourceId(), l.GetRelation()), nil)
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

// collectLinks appends the links of id in the given direction to dst, from
// the two link buckets (opened once per request), skipping ones already in
// seen (keyed by their links_out key; nil when no link can come twice) and,
// with a filter, those it rejects (a kept link may come back as its view at
// valid_at).
func collectLinks(out, in *bolt.Bucket, id string, dir aimemoryv1.Direction, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) ([]*aimemoryv1.Link, error) {
	keep := func(k, raw []byte) error {
		if !relationOK(f, k) {
			return nil
		}
		if seen != nil {
			if seen[string(k)] {
				return nil
			}
			seen[string(k)] = true
		}
		l, err := decodeLink(raw)
		if err != nil {
			return err
		}
		if l = f.View(l); l != nil {
			dst = append(dst, l)
		}
		return nil
	}
	prefix := idPrefix(id)
	if dir != aimemoryv1.Direction_DIRECTION_IN {
		c := out.Cursor() // outbound links are the values of one cursor run
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if err := keep(k, v); err != nil {
				return nil, err
			}
		}
	}
	if dir != aimemoryv1.Direction_DIRECTION_OUT {
		c := in.Cursor() // inbound: target NUL source NUL relation → the links_out row
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			target, source, rel, ok := splitLinkKey(k)
			if !ok {
				return nil, fmt.Errorf("corrupt link key %q", k)
			}
			outKey := linkKey(source, target, rel)
			raw := out.Get(outKey)
			if raw == nil {
				return nil, fmt.Errorf("link %q has no links_out row", outKey)
			}
			if err := keep(outKey, raw); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}
