package boltstore

import (
	"cmp"
	"context"
	"errors"

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
	err := s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Delete{Delete: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.DeleteMemoriesResponse{}
		return w.deleteMemories(ids, req.GetArchive(), resp)
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// deleteMemories is DeleteMemories inside a transaction, on distinct
// validated ids: also the approval path's executor. Every memory is
// authorized before any is removed, so a refused or queued request has
// written nothing (a denial of one beats the queueing of another). With
// archive each goes through the archive (reason delete), else for good.
func (w *writeTx) deleteMemories(ids []string, archive bool, resp *aimemoryv1.DeleteMemoriesResponse) error {
	var found []*aimemoryv1.Memory
	var queued error
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
			if !errors.Is(err, storage.ErrPending) {
				return err
			}
			queued = cmp.Or(queued, err)
		}
		found = append(found, m)
	}
	if queued != nil {
		return queued
	}
	for _, m := range found {
		remove := w.removeForGood
		if archive {
			remove = func(m *aimemoryv1.Memory, event string) error {
				return w.archive(m, storage.ArchiveReasonDelete, event)
			}
		}
		if err := remove(m, "memory_delete"); err != nil {
			return err
		}
		resp.Deleted = append(resp.Deleted, m.GetId())
	}
	return nil
}

// removeForGood removes m and every link touching it, live or archived.
func (w *writeTx) removeForGood(m *aimemoryv1.Memory, event string) error {
	if err := deleteArchivedLinks(w.tx, m.Id); err != nil {
		return err
	}
	return w.remove(m, event)
}
