package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// CountNamespaces counts live memories per exact namespace at or under a
// prefix (the namespace itself, or one starting with prefix + "/": literal
// and case-sensitive, unlike the reference's LIKE), densest first, from
// the in-memory index: no record is read (ops.CountNamespaces).
func (s *Store) CountNamespaces(ctx context.Context, req *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error) {
	return ops.CountNamespaces(ctx, s.idx, s.nowNanos(), req)
}
