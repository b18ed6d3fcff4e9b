package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// PromoteMemory: tier mode (no to_namespace) makes the memory long with no
// expiry; vertical mode writes a copy into a proper ancestor of its
// namespace, merging into a memory already holding the title there by the
// one merge rule, and links copy → source derived_from. Asked as
// OpPromote about the source, and in vertical mode again about the copy,
// so the ancestor's policy and guard decide as well.
func (s *Store) PromoteMemory(ctx context.Context, req *aimemoryv1.PromoteMemoryRequest) (*aimemoryv1.PromoteMemoryResponse, error) {
	if err := ops.ValidatePromote(req); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.PromoteMemoryResponse
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Promote{Promote: req}}
	err := s.writeGoverned(ctx, payload, func(w *writeTx) error {
		var err error
		resp, err = w.promote(req.GetId(), req.GetToNamespace())
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// promote is PromoteMemory's transaction step (ops.Promote), also the
// approval path's executor.
func (w *writeTx) promote(id, to string) (*aimemoryv1.PromoteMemoryResponse, error) {
	return ops.Promote(opsTx{w}, id, to)
}
