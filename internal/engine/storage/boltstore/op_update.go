package boltstore

import (
	"context"
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
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
	err := s.write(ctx, func(w *writeTx) error {
		m, err := w.update(req)
		resp = &aimemoryv1.UpdateMemoryResponse{Memory: m}
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// update is UpdateMemory's transaction step (req already validated), for
// any caller holding a write transaction (an approval, later).
func (w *writeTx) update(req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.Memory, error) {
	old, err := w.get(req.GetId())
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, req.GetId())
	}
	m, err := rules.Patch(old, req, w.now, w.s.ttl, w.principal())
	if err != nil {
		return nil, err
	}
	if m.Namespace != old.Namespace || m.Title != old.Title {
		if owner := w.titleOwner(m.Namespace, m.Title); owner != "" && owner != m.Id {
			return nil, &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
		}
	}
	// The policy sees both records, so a move is one question about
	// both namespaces.
	if err := w.authorize(storage.Write{Op: storage.OpUpdate, Old: old, New: m}); err != nil {
		return nil, err
	}
	if err := w.moveEntity(old, m); err != nil {
		return nil, err
	}
	if err := w.archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
		return nil, err
	}
	return m, w.put(old, m, "memory_update")
}
