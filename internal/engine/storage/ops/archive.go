package ops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The archive lifecycle's write steps (forget, promote, consolidate,
// restore) and the checks and answers of its reads (list, purge), written
// once for every backend. What differs per backend is only how rows are
// found and links are stored: ArchiveTx.

// ArchiveTx is what the lifecycle steps need of a write transaction
// beyond Tx: the archive rows and the links that go with them.
type ArchiveTx interface {
	Tx
	// ReviveLinks makes live the archived links of id (live again) whose
	// other end is live; the rest stay archived until it comes back.
	ReviveLinks(id string) (revived, kept uint32, err error)
	// RelinkArchived moves the archived links of from onto to: live when
	// the other end is live, else kept archived; a link that would join
	// to to itself, or that to already has, is dropped.
	RelinkArchived(from, to string) (moved, kept uint32, err error)
}

// Ref is what bulk answers show of m.
func Ref(m *aimemoryv1.Memory) *aimemoryv1.MemoryRef {
	return &aimemoryv1.MemoryRef{Id: m.Id, Title: m.Title, Namespace: m.Namespace}
}

// IDs lists the memories' ids.
func IDs(mems []*aimemoryv1.Memory) []string {
	ids := make([]string, len(mems))
	for i, m := range mems {
		ids[i] = m.GetId()
	}
	return ids
}

// SortForget orders forget matches oldest first, then by id.
func SortForget(mems []*aimemoryv1.Memory) {
	slices.SortFunc(mems, func(a, b *aimemoryv1.Memory) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.Id, b.Id))
	})
}

// Forget archives mems (reason forget), each authorised as a delete:
// Forget's step and the approval path's executor. Every memory is
// authorised before any is archived, so a refused or queued request has
// written nothing (a denial of one beats the queueing of another).
func Forget(tx Tx, mems []*aimemoryv1.Memory) error {
	var queued error
	for _, m := range mems {
		if err := tx.Authorize(storage.Write{Op: storage.OpDelete, Old: m}); err != nil {
			if !errors.Is(err, storage.ErrPending) {
				return err
			}
			queued = cmp.Or(queued, err)
		}
	}
	if queued != nil {
		return queued
	}
	for _, m := range mems {
		if err := tx.Archive(m, storage.ArchiveReasonForget, storage.EventForget); err != nil {
			return err
		}
	}
	return nil
}

// ForgetAnswer reports forget's matches (the first storage.MaxReported).
func ForgetAnswer(mems []*aimemoryv1.Memory) *aimemoryv1.ForgetResponse {
	resp := &aimemoryv1.ForgetResponse{Matched: uint32(len(mems))}
	for _, m := range mems[:min(len(mems), storage.MaxReported)] {
		resp.Memories = append(resp.Memories, Ref(m))
	}
	return resp
}

// ApprovedForget is a queued forget's execution: of the memories matching
// the request now (matches, the backend's search), those it matched when
// it was made.
func ApprovedForget(tx Tx, p *aimemoryv1.PendingForget, matches func(*aimemoryv1.ForgetRequest) ([]*aimemoryv1.Memory, error)) ([]string, error) {
	mems, err := matches(p.GetRequest())
	if err != nil {
		return nil, err
	}
	mems = slices.DeleteFunc(mems, func(m *aimemoryv1.Memory) bool { return !slices.Contains(p.GetIds(), m.GetId()) })
	if len(mems) == 0 {
		return nil, fmt.Errorf("%w: none of the %d memories this forget matched still match", storage.ErrNotFound, len(p.GetIds()))
	}
	return IDs(mems), Forget(tx, mems)
}

// ValidatePromote checks a PromoteMemoryRequest's fields.
func ValidatePromote(req *aimemoryv1.PromoteMemoryRequest) error {
	if err := record.ValidateID("id", req.GetId()); err != nil {
		return err
	}
	if to := req.GetToNamespace(); to != "" {
		return record.ValidateNamespace("to_namespace", to)
	}
	return nil
}

// Promote is PromoteMemory inside tx. Tier mode (to == "") makes the
// memory long with no expiry; vertical mode writes a copy into a proper
// ancestor of its namespace, merging into a memory already holding the
// title there by the one merge rule, and links copy → source
// derived_from. Asked as OpPromote about the source, and in vertical mode
// again about the copy, so the ancestor's policy and guard decide as well.
func Promote(tx ArchiveTx, id, to string) (*aimemoryv1.PromoteMemoryResponse, error) {
	src, err := tx.Get(id)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, id)
	}
	now := tx.Now()
	if to == "" {
		m := rules.Clone(src)
		m.Tier, m.ExpiresAt = "long", 0
		m.UpdatedAt, m.UpdatedBy = now, storage.Principal(tx.Context())
		if err := tx.Authorize(storage.Write{Op: storage.OpPromote, Old: src, New: m}); err != nil {
			return nil, err
		}
		return &aimemoryv1.PromoteMemoryResponse{Memory: m}, tx.Put(src, m, storage.EventPromote)
	}

	ancestors := record.Ancestors(src.Namespace)[1:]
	switch {
	case to == src.Namespace:
		return nil, &record.FieldError{Field: "to_namespace", Rule: fmt.Sprintf("must be a proper ancestor of %s, not the namespace itself", record.Quote(src.Namespace))}
	case !slices.Contains(ancestors, to):
		rule := fmt.Sprintf("%s is not an ancestor of %s", record.Quote(to), record.Quote(src.Namespace))
		if len(ancestors) > 0 {
			rule += " (its ancestors: " + strings.Join(ancestors, ", ") + ")"
		} else {
			rule += " (it has none)"
		}
		return nil, &record.FieldError{Field: "to_namespace", Rule: rule}
	}
	if err := tx.Authorize(storage.Write{Op: storage.OpPromote, Old: src, New: src}); err != nil {
		return nil, err
	}

	if err := writable(tx, storage.OpPromote, to); err != nil {
		return nil, err
	}
	copy := rules.Clone(src)
	copy.Namespace, copy.AccessCount, copy.LastAccessedAt = to, 0, 0
	resp := &aimemoryv1.PromoteMemoryResponse{}
	holder, err := tx.TitleOwner(to, src.Title)
	if err != nil {
		return nil, err
	}
	if holder != "" {
		old, err := tx.Get(holder)
		if err != nil {
			return nil, err
		}
		if old == nil {
			return nil, fmt.Errorf("title index names missing memory %s", holder)
		}
		merged, err := rules.Merge(old, copy, now, tx.TTL(), storage.Principal(tx.Context()))
		if err != nil {
			return nil, err
		}
		if err := tx.Authorize(storage.Write{Op: storage.OpPromote, Old: src, New: merged}); err != nil {
			return nil, err
		}
		if err := tx.Archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
			return nil, err
		}
		if err := tx.Put(old, merged, storage.EventPromote); err != nil {
			return nil, err
		}
		resp.Memory, resp.Merged = merged, true
	} else {
		rules.Create(copy, now, tx.TTL(), storage.Principal(tx.Context()))
		if err := tx.Authorize(storage.Write{Op: storage.OpPromote, Old: src, New: copy}); err != nil {
			return nil, err
		}
		if err := tx.Put(nil, copy, storage.EventPromote); err != nil {
			return nil, err
		}
		resp.Memory = copy
	}
	return resp, LinkDerived(tx, resp.Memory.Id, src.Id)
}

// LinkDerived makes sure the link copy → source derived_from is valid now:
// created, left as it is when valid, or reopened (its past interval kept).
func LinkDerived(tx ArchiveTx, copyID, srcID string) error {
	l, err := ReadLink(tx, copyID, srcID, "derived_from")
	if err != nil {
		return err
	}
	now := tx.Now()
	switch {
	case l == nil:
		l = &aimemoryv1.Link{SourceId: copyID, TargetId: srcID, Relation: "derived_from",
			CreatedAt: now, ValidFrom: now, ObservedBy: storage.Principal(tx.Context())}
	case l.ValidUntil == 0 && l.ValidFrom != 0:
		return nil
	default:
		rules.CloseInterval(l)
		l.ValidFrom, l.ValidUntil, l.ObservedBy, l.InvalidatedBy, l.InvalidatedAt = now, 0, storage.Principal(tx.Context()), "", 0
	}
	return tx.PutRecord(LinkRecord(KindLink, l))
}

// Consolidate is Consolidate inside tx (also the approval path's
// executor): one new long-tier memory from the sources, which are
// archived (reason consolidated, never hard-deleted), each after a
// derived_from link from the new memory, so the link moves into the
// archive with it and a restore of a source brings its provenance back.
//
// Governance: the new memory is asked as OpConsolidate with New (a write
// in the target namespace), each source with Old (a delete in its
// namespace); every ask happens before anything is written, and a denial
// beats a queue.
func Consolidate(tx ArchiveTx, req *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error) {
	if err := rules.ValidateConsolidate(req); err != nil {
		return nil, err
	}
	srcs := make([]*aimemoryv1.Memory, 0, len(req.GetIds()))
	for _, id := range req.GetIds() {
		m, err := tx.Get(id)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, id)
		}
		srcs = append(srcs, m)
	}
	m, err := rules.Consolidated(req, srcs, cmp.Or(req.GetAgentId(), storage.Principal(tx.Context())))
	if err != nil {
		return nil, err
	}
	if err := writable(tx, storage.OpConsolidate, m.Namespace); err != nil {
		return nil, err
	}
	owner, err := tx.TitleOwner(m.Namespace, m.Title)
	if err != nil {
		return nil, err
	}
	if owner != "" {
		return nil, &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
	}
	rules.Create(m, tx.Now(), tx.TTL(), storage.Principal(tx.Context()))
	m.ExpiresAt = 0 // long, whatever the data dir's TTL for long says

	var queued error
	asks := []storage.Write{{Op: storage.OpConsolidate, New: m}}
	for _, src := range srcs {
		asks = append(asks, storage.Write{Op: storage.OpConsolidate, Old: src})
	}
	for _, ask := range asks {
		if err := tx.Authorize(ask); err != nil {
			if !errors.Is(err, storage.ErrPending) {
				return nil, err
			}
			queued = cmp.Or(queued, err)
		}
	}
	if queued != nil {
		return nil, queued
	}

	standards, err := StandardsOf(tx, req.GetIds())
	if err != nil {
		return nil, err
	}
	if err := tx.Put(nil, m, storage.EventConsolidated); err != nil {
		return nil, err
	}
	resp := &aimemoryv1.ConsolidateResponse{Memory: m, Standards: standards}
	for _, src := range srcs {
		if err := LinkDerived(tx, m.Id, src.Id); err != nil {
			return nil, err
		}
		resp.LinksCreated++
	}
	for _, src := range srcs {
		if err := tx.Archive(src, storage.ArchiveReasonConsolidated, storage.EventDelete); err != nil {
			return nil, err
		}
		resp.Archived = append(resp.Archived, src.Id)
	}
	return resp, nil
}

// ValidateRestore checks a RestoreMemoryRequest's fields.
func ValidateRestore(req *aimemoryv1.RestoreMemoryRequest) error {
	if err := rules.ValidateIDs("id", []string{req.GetId()}); err != nil {
		return err
	}
	if req.GetVersionAt() < 0 {
		return &record.FieldError{Field: "version_at", Rule: fmt.Sprintf("must be a positive time (got %d)", req.GetVersionAt())}
	}
	return nil
}

// Restore is RestoreMemory inside tx (also the approval path's executor):
// an archived memory back under its id, with a fresh expiry for its tier
// (none for long), its metadata and tags as archived, and the links whose
// other end is live (the rest wait in the archive).
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
func Restore(ctx context.Context, tx ArchiveTx, req *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error) {
	id := req.GetId()
	row, err := Archived(tx, id)
	if err != nil {
		return nil, err
	}
	live, err := tx.Get(id)
	if err != nil {
		return nil, err
	}
	readable := func(a *storage.Archived) bool { return a != nil && authz.Of(ctx).Reads(a.Memory.GetNamespace()) }
	snap := row
	if at := req.GetVersionAt(); at != 0 {
		if snap, err = Version(tx, id, at); err != nil {
			return nil, err
		}
		if !readable(snap) { // another tenant's version is missing, as one that never was
			return nil, fmt.Errorf("%w in archive: version %s of %s", storage.ErrNotFound, record.FormatTime(at), id)
		}
	} else if row != nil && live != nil {
		return nil, fmt.Errorf("%w: memory %s is live; nothing to restore", storage.ErrConflict, id)
	}
	if !readable(snap) {
		return nil, fmt.Errorf("%w in archive: %s", storage.ErrNotFound, id)
	}
	m := rules.Clone(snap.Memory)
	m.ExpiresAt = tx.TTL().ExpiresAt(m.Tier, tx.Now())
	if live != nil {
		return restoreOver(tx, live, m)
	}
	if row != nil && req.GetVersionAt() != 0 { // the removed snapshot stays as history
		if err := tx.Archive(row.Memory, storage.ArchiveReasonSuperseded, ""); err != nil {
			return nil, err
		}
	}
	owner, err := tx.TitleOwner(m.Namespace, m.Title)
	if err != nil {
		return nil, err
	}
	var resp *aimemoryv1.RestoreMemoryResponse
	switch {
	case owner != "" && !req.GetMerge():
		return nil, &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
	case owner != "":
		if resp, err = restoreInto(tx, owner, m); err != nil {
			return nil, err
		}
	default:
		if err := tx.Authorize(storage.Write{Op: storage.OpStore, New: m}); err != nil {
			return nil, err
		}
		if err := tx.Put(nil, m, storage.EventRestore); err != nil {
			return nil, err
		}
		resp = &aimemoryv1.RestoreMemoryResponse{Memory: m}
		if resp.LinksRestored, resp.LinksKept, err = tx.ReviveLinks(id); err != nil {
			return nil, err
		}
	}
	if row != nil {
		if err := tx.DeleteRecords(Key{Kind: KindArchived, ID: id}); err != nil { // its links moved above
			return nil, err
		}
	}
	return resp, nil
}

// restoreOver sets the live memory back to version m, as an update would:
// the current version is kept as superseded, identity and counters stay.
func restoreOver(tx ArchiveTx, live, m *aimemoryv1.Memory) (*aimemoryv1.RestoreMemoryResponse, error) {
	m.Id, m.CreatedAt, m.CreatedBy = live.Id, live.CreatedAt, live.CreatedBy
	m.AccessCount, m.LastAccessedAt = live.AccessCount, live.LastAccessedAt
	m.UpdatedAt, m.UpdatedBy = tx.Now(), storage.Principal(tx.Context())
	owner, err := tx.TitleOwner(m.Namespace, m.Title)
	if err != nil {
		return nil, err
	}
	if owner != "" && owner != m.Id {
		return nil, &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
	}
	if err := tx.Authorize(storage.Write{Op: storage.OpUpdate, Old: live, New: m}); err != nil {
		return nil, err
	}
	if err := tx.Moved(live, m); err != nil {
		return nil, err
	}
	if err := tx.Archive(live, storage.ArchiveReasonSuperseded, ""); err != nil {
		return nil, err
	}
	if err := tx.Put(live, m, storage.EventRestore); err != nil {
		return nil, err
	}
	return &aimemoryv1.RestoreMemoryResponse{Memory: m}, nil
}

// restoreInto merges the restored m into owner, the live memory holding
// its title, and points m's archived links at owner.
func restoreInto(tx ArchiveTx, owner string, m *aimemoryv1.Memory) (*aimemoryv1.RestoreMemoryResponse, error) {
	old, err := tx.Get(owner)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, fmt.Errorf("title index names missing memory %s", owner)
	}
	merged, err := rules.Merge(old, m, tx.Now(), tx.TTL(), storage.Principal(tx.Context()))
	if err != nil {
		return nil, err
	}
	if err := tx.Authorize(storage.Write{Op: storage.OpMerge, Old: old, New: merged}); err != nil {
		return nil, err
	}
	if err := tx.Archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
		return nil, err
	}
	if err := tx.Put(old, merged, storage.EventRestore); err != nil {
		return nil, err
	}
	moved, kept, err := tx.RelinkArchived(m.Id, owner)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.RestoreMemoryResponse{Memory: merged, Merged: true, LinksRestored: moved, LinksKept: kept}, nil
}

// Archive list bounds (spec family-archive: default 50, cap 1000).
const (
	DefaultArchiveLimit = 50
	MaxArchiveLimit     = 1000
)

// ArchiveListLimit checks a ListArchivedRequest and returns its page size.
func ArchiveListLimit(req *aimemoryv1.ListArchivedRequest) (int, error) {
	if r := req.GetReason(); r != "" && !slices.Contains(storage.ArchiveReasons, r) {
		return 0, &record.FieldError{Field: "reason", Rule: fmt.Sprintf("must be one of %v (got %s)", storage.ArchiveReasons, record.Quote(r))}
	}
	if req.GetLimit() > MaxArchiveLimit {
		return 0, &record.FieldError{Field: "limit", Rule: fmt.Sprintf("must be from 1 to %d (got %d)", MaxArchiveLimit, req.GetLimit())}
	}
	return int(cmp.Or(req.GetLimit(), DefaultArchiveLimit)), nil
}

// ListedArchive is whether ListArchived shows row a: the request's exact
// namespace and reason, and an archive the caller may read.
func ListedArchive(ctx context.Context, req *aimemoryv1.ListArchivedRequest, a *storage.Archived) bool {
	ns := a.Memory.GetNamespace()
	return (req.GetNamespace() == "" || ns == req.GetNamespace()) &&
		(req.GetReason() == "" || a.Reason == req.GetReason()) && authz.Of(ctx).Reads(ns)
}

// SortArchived orders archive rows newest first, then by id (ListArchived).
func SortArchived(rows []*storage.Archived) {
	slices.SortFunc(rows, func(a, b *storage.Archived) int {
		return cmp.Or(cmp.Compare(b.ArchivedAt, a.ArchivedAt), cmp.Compare(a.Memory.GetId(), b.Memory.GetId()))
	})
}

// ArchivedMessage is an archive row as the wire message.
func ArchivedMessage(a *storage.Archived) *aimemoryv1.ArchivedMemory {
	return &aimemoryv1.ArchivedMemory{
		Memory: a.Memory, ArchivedAt: a.ArchivedAt, Reason: a.Reason,
		OriginalTier: a.OriginalTier, OriginalExpiresAt: a.OriginalExpiresAt,
	}
}

// ValidatePurge checks a PurgeArchiveRequest: exactly one of an explicit
// cut-off or explicit ids, so no argument can widen a purge to
// "everything".
func ValidatePurge(req *aimemoryv1.PurgeArchiveRequest) error {
	switch {
	case req.GetBefore() < 0:
		return &record.FieldError{Field: "before", Rule: fmt.Sprintf("must be a positive time (got %d)", req.GetBefore())}
	case (req.GetBefore() == 0) == (len(req.GetIds()) == 0):
		return &record.FieldError{Field: "before, ids", Rule: "give exactly one: a cut-off or ids (nothing is purged by default)"}
	}
	if len(req.GetIds()) > 0 {
		return rules.ValidateIDs("ids", req.GetIds())
	}
	return nil
}

// PurgeAnswer reports a purge of rows (the removed memories, reported
// oldest first, the first storage.MaxReported) and of versions.
func PurgeAnswer(resp *aimemoryv1.PurgeArchiveResponse, rows []*storage.Archived, versions int) {
	slices.SortFunc(rows, func(a, b *storage.Archived) int {
		return cmp.Or(cmp.Compare(a.ArchivedAt, b.ArchivedAt), cmp.Compare(a.Memory.GetId(), b.Memory.GetId()))
	})
	resp.Purged, resp.VersionsPurged = uint32(len(rows)), uint32(versions)
	for _, a := range rows[:min(len(rows), storage.MaxReported)] {
		resp.Memories = append(resp.Memories, Ref(a.Memory))
	}
}

// SortedCounts is counts as a list, count desc, then key.
func SortedCounts(counts map[string]uint64) []*aimemoryv1.CountByKey {
	out := make([]*aimemoryv1.CountByKey, 0, len(counts))
	for k, n := range counts {
		out = append(out, &aimemoryv1.CountByKey{Key: k, Count: n})
	}
	sortCounts(out)
	return out
}
