package records

import (
	"context"
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Archived is the archive row of id; storage.ErrNotFound when there is none.
func (s *Store) Archived(ctx context.Context, id string) (*storage.Archived, error) {
	return read(ctx, s, func(t seam.Tx) (*storage.Archived, error) {
		a, err := t.Archived(id)
		if err == nil && a == nil {
			err = fmt.Errorf("%w in archive: %s", storage.ErrNotFound, id)
		}
		return a, err
	})
}

// GetArchived reads archive rows by exact id and, with include_versions,
// each id's superseded versions, oldest first; rows in namespaces the
// caller may not read are not found; with the links kept in the archive
// whose both ends the caller may read. One snapshot.
func (s *Store) GetArchived(ctx context.Context, req *aimemoryv1.GetArchivedRequest) (*aimemoryv1.GetArchivedResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	readable := authz.Of(ctx).Reader()
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.GetArchivedResponse, error) {
		resp := &aimemoryv1.GetArchivedResponse{}
		seen := map[string]bool{}
		for _, id := range rules.Dedupe(append([]string(nil), req.GetIds()...)) {
			if req.GetIncludeVersions() {
				vs, err := t.Versions(id)
				if err != nil {
					return nil, err
				}
				for _, v := range vs {
					if readable(v.Memory.GetNamespace()) {
						resp.Versions = append(resp.Versions, ops.ArchivedMessage(v))
					}
				}
			}
			a, err := t.Archived(id)
			if err != nil {
				return nil, err
			}
			if a == nil || !readable(a.Memory.GetNamespace()) {
				resp.NotFound = append(resp.NotFound, id)
				continue
			}
			resp.Archived = append(resp.Archived, ops.ArchivedMessage(a))
			out, in, err := t.Links([]string{id}, aimemoryv1.Direction_DIRECTION_BOTH, "", true)
			if err != nil {
				return nil, err
			}
			for _, l := range append(out[id], in[id]...) {
				if k := ops.LinkKey(l); !seen[k] {
					seen[k] = true
					resp.Links = append(resp.Links, l)
				}
			}
		}
		// An id neither live and readable (t.Get) nor archived has no namespace: not readable.
		visible := ops.ReadableIDs(func(ns string) bool { return ns != "" && readable(ns) }, func(id string) (string, error) { return anyNamespace(t, id) })
		var err error
		resp.Links, err = ops.ReadableLinks(resp.Links, visible)
		return resp, err
	})
}

// anyNamespace is the namespace of memory id, live when the caller may
// read it (t.Get), else archived; "" when neither.
func anyNamespace(t seam.Tx, id string) (string, error) {
	if m, err := t.Get(id); err != nil || m != nil {
		return m.GetNamespace(), err
	}
	a, err := t.Archived(id)
	if err != nil || a == nil {
		return "", err
	}
	return a.Memory.GetNamespace(), nil
}

// ListArchived pages through the removed memories the caller may read,
// newest first, filtered by exact namespace and reason. Reason
// "superseded" lists the versions updates and merges replaced instead.
// Each listed row carries how many superseded versions its id has.
func (s *Store) ListArchived(ctx context.Context, req *aimemoryv1.ListArchivedRequest) (*aimemoryv1.ListArchivedResponse, error) {
	limit, err := ops.ArchiveListLimit(req)
	if err != nil {
		return nil, err
	}
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.ListArchivedResponse, error) {
		var rows []*storage.Archived
		err := t.ArchiveRows(req.GetReason(), func(a *storage.Archived) error {
			if ops.ListedArchive(ctx, req, a) {
				rows = append(rows, a)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		ops.SortArchived(rows)
		off := min(int(req.GetOffset()), len(rows))
		page := rows[off:min(off+limit, len(rows))]
		ids := make([]string, len(page))
		for i, a := range page {
			ids[i] = a.Memory.GetId()
		}
		counts, err := t.VersionCounts(ids)
		if err != nil {
			return nil, err
		}
		resp := &aimemoryv1.ListArchivedResponse{Total: uint32(len(rows))}
		for _, a := range page {
			resp.Archived = append(resp.Archived, ops.ArchivedMessage(a))
			resp.Versions = append(resp.Versions, counts[a.Memory.GetId()])
		}
		return resp, nil
	})
}
