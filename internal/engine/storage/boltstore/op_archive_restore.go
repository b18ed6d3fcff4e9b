package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// RestoreMemory brings an archived memory back under its id: a fresh
// expiry for its tier (none for long), its metadata and tags as archived,
// and the links whose other end is live (the rest wait in the archive).
//
//   - Without version_at it restores the archive row; a live id is a
//     conflict (nothing to restore).
//   - With version_at it restores that superseded version: a live memory
//     is set back to it (the current version is kept as superseded); a
//     removed one comes back as it (its archive row is kept as a version).
//
// A title another live memory holds is a storage.ConflictError, or with
// merge the restored memory merges into that one by the one merge rule
// (rules.Merge) and its archived links follow it. Asked as OpStore
// (OpUpdate for a live memory, OpMerge for a merge).
func (s *Store) RestoreMemory(ctx context.Context, req *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error) {
	if err := rules.ValidateIDs("id", []string{req.GetId()}); err != nil {
		return nil, err
	}
	if req.GetVersionAt() < 0 {
		return nil, &record.FieldError{Field: "version_at", Rule: fmt.Sprintf("must be a positive time (got %d)", req.GetVersionAt())}
	}
	var resp *aimemoryv1.RestoreMemoryResponse
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Restore{Restore: req}}
	err := s.writeGoverned(ctx, payload, func(w *writeTx) (err error) {
		resp, err = w.restore(req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (w *writeTx) restore(req *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error) {
	id := req.GetId()
	row, err := archivedRow(w.tx, id)
	if err != nil {
		return nil, err
	}
	live, err := w.get(id)
	if err != nil {
		return nil, err
	}
	snap := row
	if at := req.GetVersionAt(); at != 0 {
		raw := w.tx.Bucket(bucketVersions).Get(versionKey(id, at))
		if raw == nil {
			return nil, fmt.Errorf("%w in archive: version %s of %s", storage.ErrNotFound, record.FormatTime(at), id)
		}
		if snap, err = decodeArchived(raw); err != nil {
			return nil, err
		}
	} else if row != nil && live != nil {
		return nil, fmt.Errorf("%w: memory %s is live; nothing to restore", storage.ErrConflict, id)
	}
	if snap == nil || !storage.Readable(w.ctx, snap.Memory.GetNamespace()) {
		return nil, fmt.Errorf("%w in archive: %s", storage.ErrNotFound, id)
	}
	m := rules.Clone(snap.Memory)
	m.ExpiresAt = w.s.ttl.ExpiresAt(m.Tier, w.now)
	if live != nil {
		return w.restoreOver(live, m)
	}
	if row != nil {
		if req.GetVersionAt() != 0 { // the removed snapshot stays as history
			if err := w.archive(row.Memory, storage.ArchiveReasonSuperseded, ""); err != nil {
				return nil, err
			}
		}
		if err := w.tx.Bucket(bucketArchive).Delete([]byte(id)); err != nil {
			return nil, err
		}
	}
	if owner := w.titleOwner(m.Namespace, m.Title); owner != "" {
		if !req.GetMerge() {
			return nil, &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
		}
		return w.restoreInto(owner, m)
	}
	if err := w.authorize(storage.Write{Op: storage.OpStore, New: m}); err != nil {
		return nil, err
	}
	if err := w.put(nil, m, "memory_restore"); err != nil {
		return nil, err
	}
	moved, kept, err := moveLinks(w.tx, id, bucketArchivedLinksOut, bucketArchivedLinksIn, bucketLinksOut, bucketLinksIn,
		func(l *aimemoryv1.Link) bool { return w.isLive(otherEnd(l, id)) })
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.RestoreMemoryResponse{Memory: m, LinksRestored: uint32(moved), LinksKept: uint32(kept)}, nil
}

// restoreOver sets the live memory back to version m, as an update would:
// the current version is kept as superseded, identity and counters stay.
func (w *writeTx) restoreOver(live, m *aimemoryv1.Memory) (*aimemoryv1.RestoreMemoryResponse, error) {
	m.Id, m.CreatedAt, m.CreatedBy = live.Id, live.CreatedAt, live.CreatedBy
	m.AccessCount, m.LastAccessedAt = live.AccessCount, live.LastAccessedAt
	m.UpdatedAt, m.UpdatedBy = w.now, w.principal()
	if owner := w.titleOwner(m.Namespace, m.Title); owner != "" && owner != m.Id {
		return nil, &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
	}
	if err := w.authorize(storage.Write{Op: storage.OpUpdate, Old: live, New: m}); err != nil {
		return nil, err
	}
	if err := w.moveEntity(live, m); err != nil {
		return nil, err
	}
	if err := w.archive(live, storage.ArchiveReasonSuperseded, ""); err != nil {
		return nil, err
	}
	if err := w.put(live, m, "memory_restore"); err != nil {
		return nil, err
	}
	return &aimemoryv1.RestoreMemoryResponse{Memory: m}, nil
}

// restoreInto merges the restored m into owner, the live memory holding
// its title, and points m's archived links at owner.
func (w *writeTx) restoreInto(owner string, m *aimemoryv1.Memory) (*aimemoryv1.RestoreMemoryResponse, error) {
	old, err := w.get(owner)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, fmt.Errorf("title index names missing memory %s", owner)
	}
	merged, err := rules.Merge(old, m, w.now, w.s.ttl, w.principal())
	if err != nil {
		return nil, err
	}
	if err := w.authorize(storage.Write{Op: storage.OpMerge, Old: old, New: merged}); err != nil {
		return nil, err
	}
	if err := w.archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
		return nil, err
	}
	if err := w.put(old, merged, "memory_restore"); err != nil {
		return nil, err
	}
	moved, kept, err := w.relinkArchived(m.Id, owner)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.RestoreMemoryResponse{Memory: merged, Merged: true, LinksRestored: moved, LinksKept: kept}, nil
}

// relinkArchived moves the archived links of from onto to: live when the
// other end is live, else kept in the archive; a link that would join to
// to itself, or that to already has, is dropped.
func (w *writeTx) relinkArchived(from, to string) (moved, kept uint32, err error) {
	aout, ain := w.tx.Bucket(bucketArchivedLinksOut), w.tx.Bucket(bucketArchivedLinksIn)
	links, err := collectLinks(aout, ain, from, aimemoryv1.Direction_DIRECTION_BOTH, nil, map[string]bool{}, nil)
	if err != nil {
		return 0, 0, err
	}
	lout, lin := w.tx.Bucket(bucketLinksOut), w.tx.Bucket(bucketLinksIn)
	for _, l := range links {
		if err := deleteLinkRows(aout, ain, l); err != nil {
			return 0, 0, err
		}
		n := proto.Clone(l).(*aimemoryv1.Link)
		if n.SourceId == from {
			n.SourceId = to
		}
		if n.TargetId == from {
			n.TargetId = to
		}
		if n.SourceId == n.TargetId {
			continue
		}
		out, in := aout, ain
		if w.isLive(otherEnd(n, to)) {
			out, in = lout, lin
		}
		if out.Get(linkKey(n.SourceId, n.TargetId, n.Relation)) != nil {
			continue
		}
		if err := putLinkRows(out, in, n); err != nil {
			return 0, 0, err
		}
		if out == lout {
			moved++
		} else {
			kept++
		}
	}
	return moved, kept, nil
}

func deleteLinkRows(out, in *bolt.Bucket, l *aimemoryv1.Link) error {
	if err := out.Delete(linkKey(l.SourceId, l.TargetId, l.Relation)); err != nil {
		return err
	}
	return in.Delete(linkKey(l.TargetId, l.SourceId, l.Relation))
}

// otherEnd is l's end that is not id.
func otherEnd(l *aimemoryv1.Link, id string) string {
	if l.TargetId == id {
		return l.SourceId
	}
	return l.TargetId
}

func (w *writeTx) isLive(id string) bool { return w.tx.Bucket(bucketMemories).Get([]byte(id)) != nil }
