package records

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// UpdateMemory patches the fields a request sets (ops.Update). A new title
// or namespace must be free (storage.ErrConflict). A tier change
// re-derives the expiry from the new tier's TTL (none for long); an
// explicit expires_at or clear_expires_at wins over that. metadata.agent_id
// cannot change once set. updated_at is bumped and updated_by stamped with
// the caller on every call. The version it replaces is kept in the archive
// (superseded); an entity's aliases move with it.
func (s *Store) UpdateMemory(ctx context.Context, req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.UpdateMemoryResponse, error) {
	if err := rules.ValidatePatch(req); err != nil {
		return nil, err
	}
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Update{Update: req}}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.UpdateMemoryResponse, error) {
		resp := &aimemoryv1.UpdateMemoryResponse{}
		return resp, ops.Update(t, req, resp)
	})
}

// DeleteMemories removes memories by exact id, with their index entries,
// in one transaction: with archive through the archive (reason delete,
// links kept there), else for good with every link touching them, live or
// archived. Every memory is authorized before any is removed (ops.Delete).
func (s *Store) DeleteMemories(ctx context.Context, req *aimemoryv1.DeleteMemoriesRequest) (*aimemoryv1.DeleteMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	ids := rules.Dedupe(append([]string(nil), req.GetIds()...))
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Delete{Delete: req}}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.DeleteMemoriesResponse, error) {
		resp := &aimemoryv1.DeleteMemoriesResponse{}
		return resp, ops.Delete(t, ids, req.GetArchive(), resp)
	})
}
