package records

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TouchMemories applies a recall's side effects to the given memories in
// one transaction and returns them as they are afterwards (unknown ids are
// skipped): access_count+1 and last_accessed_at; a short or mid expiry is
// pushed out to at least now+extend (a read never shortens it); mid
// memories reaching 5 accesses become long with no expiry (rules.Touch).
// Nothing of it raises rank. Not subject to the write policy; memories in
// guarded namespaces are skipped like unknown ids.
func (s *Store) TouchMemories(ctx context.Context, req *aimemoryv1.TouchMemoriesRequest) (*aimemoryv1.TouchMemoriesResponse, error) {
	if err := rules.ValidateIDs("ids", req.GetIds()); err != nil {
		return nil, err
	}
	ids := rules.Dedupe(append([]string(nil), req.GetIds()...))
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.TouchMemoriesResponse, error) {
		resp := &aimemoryv1.TouchMemoriesResponse{}
		return resp, ops.Touch(t, ids, resp)
	})
}

// Forget archives (reason forget) every memory matching all of the
// request's criteria: exact namespace, tier, and a pattern whose every
// word the memory's title, content or tags hold (search's analysis, so
// "draft notes" matches only memories with both words). Expired and long
// memories match like any. Without a namespace, guarded namespaces are
// not searched; named, the engine's service refuses it (authz) before
// anything is read. Only memories the caller may read match
// (Tx.ForgetMatches, which also refuses a pattern without a word to
// match). Each memory is asked of the policy as OpDelete; one refusal
// fails the whole request and nothing is archived (ops.Forget). With
// dry_run it writes nothing and reports the same matches.
func (s *Store) Forget(ctx context.Context, req *aimemoryv1.ForgetRequest) (*aimemoryv1.ForgetResponse, error) {
	if err := rules.ValidateForget(req); err != nil { // the pattern's words are checked in the transaction
		return nil, err
	}
	if req.GetDryRun() {
		return read(ctx, s, func(t seam.Tx) (*aimemoryv1.ForgetResponse, error) {
			mems, err := t.ForgetMatches(req)
			return ops.ForgetAnswer(mems), err
		})
	}
	// The payload is filled in by the run that matched, so a queued forget
	// records the ids the requester would have archived.
	payload := &aimemoryv1.PendingPayload{}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.ForgetResponse, error) {
		mems, err := t.ForgetMatches(req)
		if err != nil {
			return nil, err
		}
		payload.Action = &aimemoryv1.PendingPayload_Forget{Forget: &aimemoryv1.PendingForget{Request: req, Ids: ops.IDs(mems)}}
		return ops.ForgetAnswer(mems), ops.Forget(t, mems)
	})
}

// PromoteMemory: tier mode (no to_namespace) makes the memory long with no
// expiry; vertical mode writes a copy into a proper ancestor of its
// namespace, merging into a memory already holding the title there by the
// one merge rule, and links copy → source derived_from. Asked as
// OpPromote about the source, and in vertical mode again about the copy,
// so the ancestor's policy and guard decide as well (ops.Promote).
func (s *Store) PromoteMemory(ctx context.Context, req *aimemoryv1.PromoteMemoryRequest) (*aimemoryv1.PromoteMemoryResponse, error) {
	if err := ops.ValidatePromote(req); err != nil {
		return nil, err
	}
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Promote{Promote: req}}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.PromoteMemoryResponse, error) {
		return ops.Promote(t, req.GetId(), req.GetToNamespace())
	})
}

// Consolidate writes one new long-tier memory from its sources and
// archives the sources (reason consolidated, through the one archive
// operation, never a hard delete), in one transaction: a kill at any
// moment leaves all of it or none. Each source gets a derived_from link
// from the new memory before it is archived, so the link moves into the
// archive with it: provenance can be walked with include_archived, and a
// restore of a source puts its link back in the live graph.
//
// Governance: the new memory is asked as OpConsolidate with New (write in
// the target namespace), each source with Old (delete in its namespace);
// every ask happens before anything is written, and a denial beats a queue.
func (s *Store) Consolidate(ctx context.Context, req *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error) {
	if err := rules.ValidateConsolidate(req); err != nil {
		return nil, err
	}
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Consolidate{Consolidate: req}}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.ConsolidateResponse, error) { return ops.Consolidate(t, req) })
}

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
	if err := ops.ValidateRestore(req); err != nil {
		return nil, err
	}
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Restore{Restore: req}}
	return governed(ctx, s, payload, func(t seam.Tx) (*aimemoryv1.RestoreMemoryResponse, error) { return ops.Restore(t.Context(), t, req) })
}

// CollectGarbage removes every expired memory the caller may read,
// through the archive (reason ttl_expired, metadata and links kept) when
// req.archive, else for good, all in one transaction, and reports each by
// id, title and namespace, soonest expiry first. With dry_run, or with
// nothing of the caller's expired, it writes nothing. Not asked of the
// policy: the expiry is the memory's own.
func (s *Store) CollectGarbage(ctx context.Context, req *aimemoryv1.CollectGarbageRequest) (*aimemoryv1.CollectGarbageResponse, error) {
	if expired, err := s.HasExpired(ctx); err != nil || !expired {
		return &aimemoryv1.CollectGarbageResponse{}, err
	}
	readable := authz.Of(ctx).Reader()
	collect := func(t seam.Tx, remove func(*aimemoryv1.Memory) error) (*aimemoryv1.CollectGarbageResponse, error) {
		mems, err := t.Expired()
		if err != nil {
			return nil, err
		}
		resp := &aimemoryv1.CollectGarbageResponse{}
		for _, m := range mems {
			if !readable(m.GetNamespace()) {
				continue
			}
			if err := remove(m); err != nil {
				return nil, err
			}
			resp.Collected, resp.Memories = append(resp.Collected, m.Id), append(resp.Memories, ops.Ref(m))
		}
		return resp, nil
	}
	// Read first: another's expired memories are no reason for a commit.
	resp, err := read(ctx, s, func(t seam.Tx) (*aimemoryv1.CollectGarbageResponse, error) {
		return collect(t, func(*aimemoryv1.Memory) error { return nil })
	})
	if err != nil || req.GetDryRun() || len(resp.Collected) == 0 {
		return resp, err
	}
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.CollectGarbageResponse, error) {
		return collect(t, func(m *aimemoryv1.Memory) error {
			if req.GetArchive() {
				return t.Archive(m, storage.ArchiveReasonTTL, storage.EventGC)
			}
			return t.Remove(m, storage.EventGC)
		})
	})
}
