package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// UpdateMemory patches the fields a request sets. A new title or namespace
// must be free (storage.ErrConflict). A tier change re-derives the expiry from the
// new tier's TTL (none for long); an explicit expires_at or
// clear_expires_at wins over that. metadata.agent_id cannot change once
// set. updated_at is bumped and updated_by stamped with the caller on every
// call. The version it replaces is kept in the archive (superseded).
func (s *Store) UpdateMemory(ctx context.Context, req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.UpdateMemoryResponse, error) {
	if err := rules.ValidatePatch(req); err != nil {
		return nil, err
	}
	var resp *aimemoryv1.UpdateMemoryResponse
	err := s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Update{Update: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.UpdateMemoryResponse{}
		return w.updateMemory(req, resp)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// updateMemory is UpdateMemory inside a transaction (ops.Update), on a
// validated request (rules.ValidatePatch): also the approval path's executor.
func (w *writeTx) updateMemory(req *aimemoryv1.UpdateMemoryRequest, resp *aimemoryv1.UpdateMemoryResponse) error {
	return ops.Update(opsTx{w}, req, resp)
}
