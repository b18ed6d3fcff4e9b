package records

import (
	"context"
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Archived is the archive row of id; storage.ErrNotFound when there is none.
func (s *Store) Archived(ctx context.Context, id string) (*storage.Archived, error) {
	return read(ctx, s, func(t seam.Tx) (*storage.Archived, error) {
		a, err := ops.Archived(t, id)
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
			a, err := ops.Archived(t, id)
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
			resp.Links = ops.CollectLinks(out, in, id, nil, seen, resp.Links)
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
	a, err := ops.Archived(t, id)
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
		err := t.ArchiveRows(req.GetReason(), 0, func(a *storage.Archived) error {
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

// PurgeArchive deletes archive rows, their superseded versions and the
// archived links of the purged rows for good. It takes exactly one of an
// explicit cut-off (rows archived before it, versions whose key time is)
// or explicit ids (their rows and versions); anything else is an error
// and purges nothing, so no argument can widen it to "everything". Rows
// the caller may not read (another's inbox) are not purged (the engine's
// own schedule, authz.System, reads all). With dry_run it deletes nothing.
func (s *Store) PurgeArchive(ctx context.Context, req *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, error) {
	if err := ops.ValidatePurge(req); err != nil {
		return nil, err
	}
	// Read first: a scheduled purge mostly finds nothing old, no reason
	// for a write transaction.
	resp, err := read(ctx, s, func(t seam.Tx) (*aimemoryv1.PurgeArchiveResponse, error) {
		resp, _, _, err := selectPurge(ctx, t, req)
		return resp, err
	})
	if err != nil || req.GetDryRun() || resp.Purged+resp.VersionsPurged == 0 {
		return resp, err
	}
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.PurgeArchiveResponse, error) {
		resp, rows, versions, err := selectPurge(ctx, t, req)
		if err != nil {
			return nil, err
		}
		return resp, purge(t, rows, versions)
	})
}

// purge deletes the archive rows of ids with the archived links touching
// them (an end gone for good takes its links), and the versions vs.
func purge(t seam.Tx, ids []string, vs []*storage.Archived) error {
	out, in, err := t.Links(ids, aimemoryv1.Direction_DIRECTION_BOTH, "", true)
	if err != nil {
		return err
	}
	keys := make([]ops.Key, 0, len(ids)+len(vs))
	for _, ls := range [2]map[string][]*aimemoryv1.Link{out, in} {
		for _, links := range ls {
			for _, l := range links {
				keys = append(keys, ops.LinkRecordKey(ops.KindArchivedLink, l))
			}
		}
	}
	for _, id := range ids {
		keys = append(keys, ops.Key{Kind: ops.KindArchived, ID: id})
	}
	for _, v := range vs {
		keys = append(keys, ops.Key{Kind: ops.KindVersion, ID: v.Memory.GetId(), At: v.VersionAt})
	}
	return t.DeleteRecords(keys...)
}

// selectPurge is what req purges (the ids of archive rows, and versions)
// and the answer reporting it.
func selectPurge(ctx context.Context, t seam.Tx, req *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, []string, []*storage.Archived, error) {
	resp := &aimemoryv1.PurgeArchiveResponse{}
	readable := func(a *storage.Archived) bool { return authz.Of(ctx).Reads(a.Memory.GetNamespace()) }
	var purged, versions []*storage.Archived
	if before := req.GetBefore(); before > 0 {
		err := t.ArchiveRows("", before, func(a *storage.Archived) error {
			if readable(a) {
				purged = append(purged, a)
			}
			return nil
		})
		if err == nil {
			err = t.ArchiveRows(storage.ArchiveReasonSuperseded, before, func(v *storage.Archived) error {
				if readable(v) {
					versions = append(versions, v)
				}
				return nil
			})
		}
		if err != nil {
			return nil, nil, nil, err
		}
	} else {
		for _, id := range rules.Dedupe(append([]string(nil), req.GetIds()...)) {
			a, err := ops.Archived(t, id)
			if err != nil {
				return nil, nil, nil, err
			}
			vs, err := t.Versions(id)
			if err != nil {
				return nil, nil, nil, err
			}
			vs = slices.DeleteFunc(vs, func(v *storage.Archived) bool { return !readable(v) })
			if a != nil && readable(a) {
				purged = append(purged, a)
			} else if len(vs) == 0 {
				resp.NotFound = append(resp.NotFound, id)
			}
			versions = append(versions, vs...)
		}
	}
	rows := make([]string, len(purged))
	for i, a := range purged {
		rows[i] = a.Memory.GetId()
	}
	ops.PurgeAnswer(resp, purged, len(versions))
	return resp, rows, versions, nil
}
