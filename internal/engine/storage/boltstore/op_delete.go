package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// DeleteMemories removes memories by exact id, with their index entries and
// every link touching them, in one transaction. Never archived.
func (s *Store) DeleteMemories(ctx context.Context, req *aimemoryv1.DeleteMemoriesRequest) (*aimemoryv1.DeleteMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	ids := rules.Dedupe(append([]string(nil), req.GetIds()...))
	var resp *aimemoryv1.DeleteMemoriesResponse
	err := s.write(ctx, func(w *writeTx) error {
		resp = &aimemoryv1.DeleteMemoriesResponse{}
		for _, id := range ids {
			m, err := w.get(id)
			if err != nil {
				return err
			}
			if m == nil {
				resp.NotFound = append(resp.NotFound, id)
				continue
			}
			if err := w.authorize(storage.Write{Op: storage.OpDelete, Old: m}); err != nil {
				return err
			}
			if err := w.remove(m, "memory_delete"); err != nil {
				return err
			}
			resp.Deleted = append(resp.Deleted, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}
