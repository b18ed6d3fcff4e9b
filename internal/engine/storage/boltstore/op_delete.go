package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// DeleteMemories removes memories by exact id, with their index entries, in
// one transaction: with archive through the archive (reason delete, links
// kept there), else for good with every link touching them, live or
// archived.
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
			if err := w.deleteMemory(m, req.GetArchive()); err != nil {
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

// deleteMemory is DeleteMemories' transaction step for one memory: the
// policy's delete check, then the removal (for an approval, later, too).
func (w *writeTx) deleteMemory(m *aimemoryv1.Memory, archive bool) error {
	if err := w.authorize(storage.Write{Op: storage.OpDelete, Old: m}); err != nil {
		return err
	}
	if archive {
		return w.archive(m, storage.ArchiveReasonDelete, "memory_delete")
	}
	return w.removeForGood(m, "memory_delete")
}

// removeForGood removes m and every link touching it, live or archived.
func (w *writeTx) removeForGood(m *aimemoryv1.Memory, event string) error {
	if err := deleteArchivedLinks(w.tx, m.Id); err != nil {
		return err
	}
	return w.remove(m, event)
}
