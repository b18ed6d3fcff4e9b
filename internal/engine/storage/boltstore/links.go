package boltstore

import (
	"bytes"
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
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

// linksOf appends the links of id in the given direction to dst, skipping
// ones already in seen (keyed by their links_out key; nil when the caller
// asks one direction of distinct ids, where no link can come twice) and,
// with a filter, those it rejects (a kept link may come back as its view
// at valid_at).
func linksOf(tx *bolt.Tx, id string, dir aimemoryv1.Direction, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) ([]*aimemoryv1.Link, error) {
	return collectLinks(tx.Bucket(bucketLinksOut), tx.Bucket(bucketLinksIn), id, dir, f, seen, dst)
}

// collectLinks is linksOf over the two link buckets, opened once per request.
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

// GetLinks returns the links of a set of memories in one call, filtered by
// relation, validity at an instant and observer, with the far ends'
// titles on request: a traversal's frontier read (ops.LinksAnswer, over
// one read transaction).
func (s *Store) GetLinks(ctx context.Context, req *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	f, err := ops.ValidateGetLinks(req)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.GetLinksResponse
	err = s.db.View(func(tx *bolt.Tx) error {
		var err error
		resp, err = ops.LinksAnswer(authz.Of(ctx).Reader(), req, f, readLinks(tx))
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Traverse walks breadth-first (ops.TraverseAnswer) over one read
// transaction: every level sees the same snapshot.
func (s *Store) Traverse(ctx context.Context, req *aimemoryv1.TraverseRequest) (*aimemoryv1.TraverseResponse, error) {
	w, err := ops.ValidateTraverse(req)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.TraverseResponse
	err = s.db.View(func(tx *bolt.Tx) error {
		r := readLinks(tx)
		var err error
		resp, err = ops.TraverseAnswer(authz.Of(ctx).Reader(), w, func([]string) (ops.LinkReads, error) { return r, nil })
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// linkReads is ops.LinkReads over one read transaction's buckets.
type linkReads struct {
	mems, arch, out, in, archOut, archIn *bolt.Bucket
}

func readLinks(tx *bolt.Tx) linkReads {
	return linkReads{
		mems: tx.Bucket(bucketMemories), arch: tx.Bucket(bucketArchive),
		out: tx.Bucket(bucketLinksOut), in: tx.Bucket(bucketLinksIn),
		archOut: tx.Bucket(bucketArchivedLinksOut), archIn: tx.Bucket(bucketArchivedLinksIn),
	}
}

func (r linkReads) Exists(id string) (live, archived bool, err error) {
	return r.mems.Get([]byte(id)) != nil, r.arch.Get([]byte(id)) != nil, nil
}

func (r linkReads) Node(id string) (*aimemoryv1.NodeSummary, error) {
	return anyNodeSummary(r.mems, r.arch, id)
}

func (r linkReads) Links(id string, archived bool, dir aimemoryv1.Direction, f *rules.LinkFilter, seen map[string]bool, dst []*aimemoryv1.Link) ([]*aimemoryv1.Link, error) {
	if archived {
		return collectLinks(r.archOut, r.archIn, id, dir, f, seen, dst)
	}
	return collectLinks(r.out, r.in, id, dir, f, seen, dst)
}

// anyNodeSummary is nodeSummary of a live memory, else of an archived one.
func anyNodeSummary(mems, arch *bolt.Bucket, id string) (*aimemoryv1.NodeSummary, error) {
	if row := mems.Get([]byte(id)); row != nil {
		return liveSummary(id, row) // one lookup, not one to test and one to read
	}
	raw := arch.Get([]byte(id))
	if raw == nil {
		return nil, fmt.Errorf("link names missing memory %s", id)
	}
	return archivedSummary(id, raw)
}
