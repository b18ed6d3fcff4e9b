package boltstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// CountNamespaces counts live memories per exact namespace at or under a
// prefix (the namespace itself, or one starting with prefix + "/": literal
// and case-sensitive, unlike the reference's LIKE), densest first, from
// the in-memory index: no record is read.
func (s *Store) CountNamespaces(ctx context.Context, req *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error) {
	prefix := req.GetPrefix()
	if prefix != "" {
		if err := record.ValidateNamespace("prefix", prefix); err != nil {
			return nil, err
		}
	}
	counts, total := s.idx.Namespaces(prefix, s.nowNanos())
	for ns, n := range counts {
		if !storage.Readable(ctx, ns) { // another identity's inbox
			delete(counts, ns)
			total -= n
		}
	}
	resp := &aimemoryv1.CountNamespacesResponse{Total: total}
	for ns, n := range counts {
		resp.Namespaces = append(resp.Namespaces, &aimemoryv1.CountByKey{Key: ns, Count: n})
	}
	slices.SortFunc(resp.Namespaces, func(a, b *aimemoryv1.CountByKey) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
	})
	if limit := int(req.GetLimit()); limit > 0 && len(resp.Namespaces) > limit {
		resp.Namespaces = resp.Namespaces[:limit]
	}
	return resp, nil
}
