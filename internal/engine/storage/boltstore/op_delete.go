package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
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

// deleteMemories is DeleteMemories inside a transaction (ops.Delete), on
// distinct validated ids: also the approval path's executor.
func (w *writeTx) deleteMemories(ids []string, archive bool, resp *aimemoryv1.DeleteMemoriesResponse) error {
	return ops.Delete(opsTx{w}, ids, archive, resp)
}

// removeForGood removes m and every link touching it, live or archived.
func (w *writeTx) removeForGood(m *aimemoryv1.Memory, event string) error {
	if err := deleteArchivedLinks(w.tx, m.Id); err != nil {
		return err
	}
	return w.remove(m, event)
}
