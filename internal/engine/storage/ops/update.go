package ops

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Update is UpdateMemory inside tx, on a validated request
// (rules.ValidatePatch): a new title or namespace must be free, the policy
// sees both records (a move is one question about both namespaces), what
// moves with the memory moves (tx.Moved), and the replaced version is
// archived as superseded.
func Update(tx Tx, req *aimemoryv1.UpdateMemoryRequest, resp *aimemoryv1.UpdateMemoryResponse) error {
	old, err := tx.Get(req.GetId())
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("%w: %s", storage.ErrNotFound, req.GetId())
	}
	m, err := rules.Patch(old, req, tx.Now(), tx.TTL(), storage.Principal(tx.Context()))
	if err != nil {
		return err
	}
	if m.Namespace != old.Namespace || m.Title != old.Title {
		if err := writable(tx, storage.OpUpdate, m.Namespace); err != nil {
			return err
		}
		owner, err := tx.TitleOwner(m.Namespace, m.Title)
		if err != nil {
			return err
		}
		if owner != "" && owner != m.Id {
			return &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
		}
	}
	if err := tx.Authorize(storage.Write{Op: storage.OpUpdate, Old: old, New: m}); err != nil {
		return err
	}
	if err := tx.Moved(old, m); err != nil {
		return err
	}
	if err := tx.Archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
		return err
	}
	resp.Memory = m
	return tx.Put(old, m, storage.EventUpdate)
}

// Delete is DeleteMemories inside tx, on distinct validated ids. Every
// memory is authorized before any is removed, so a refused or queued
// request has written nothing (a denial of one beats the queueing of
// another). With archive each goes through the archive (reason delete),
// else for good.
func Delete(tx Tx, ids []string, archive bool, resp *aimemoryv1.DeleteMemoriesResponse) error {
	var found []*aimemoryv1.Memory
	var queued error
	for _, id := range ids {
		m, err := tx.Get(id)
		if err != nil {
			return err
		}
		if m == nil {
			resp.NotFound = append(resp.NotFound, id)
			continue
		}
		if err := tx.Authorize(storage.Write{Op: storage.OpDelete, Old: m}); err != nil {
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
		var err error
		if archive {
			err = tx.Archive(m, storage.ArchiveReasonDelete, storage.EventDelete)
		} else {
			err = tx.Remove(m, storage.EventDelete)
		}
		if err != nil {
			return err
		}
		resp.Deleted = append(resp.Deleted, m.GetId())
	}
	return nil
}

// Touch applies a recall's side effects (rules.Touch) to distinct
// validated ids inside tx and returns the memories as they are after;
// unknown ids are skipped, and so are memories in guarded namespaces,
// which take no ordinary writes, not even a touch. Not subject to the
// write policy: a read's bookkeeping is not the caller's write.
func Touch(tx Tx, ids []string, resp *aimemoryv1.TouchMemoriesResponse) error {
	for _, id := range ids {
		old, err := tx.Get(id)
		if err != nil {
			return err
		}
		if old == nil || authz.IsGuarded(old.Namespace) {
			continue
		}
		m := rules.Touch(old, tx.Now(), tx.TTL())
		if err := tx.Put(old, m, storage.EventTouch); err != nil {
			return err
		}
		resp.Memories = append(resp.Memories, m)
	}
	return nil
}
