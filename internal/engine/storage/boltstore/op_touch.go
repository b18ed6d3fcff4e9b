package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// TouchMemories applies a recall's side effects to the given memories in
// one transaction and returns them as they are afterwards (unknown ids are
// skipped): access_count+1 and last_accessed_at; a short or mid expiry is
// pushed out to at least now+extend (a read never shortens it); mid
// memories reaching 5 accesses become long with no expiry (rules.Touch).
// Nothing of it raises rank. Not subject to the write policy;
// memories in guarded namespaces are skipped like unknown ids.
func (s *Store) TouchMemories(ctx context.Context, req *aimemoryv1.TouchMemoriesRequest) (*aimemoryv1.TouchMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	ids := rules.Dedupe(append([]string(nil), req.GetIds()...))
	var resp *aimemoryv1.TouchMemoriesResponse
	err := s.write(ctx, func(w *writeTx) error {
		resp = &aimemoryv1.TouchMemoriesResponse{}
		return ops.Touch(opsTx{w}, ids, resp)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
