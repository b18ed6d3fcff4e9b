package boltstore

import (
	"context"
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// maxContradictions caps potential_contradictions.
const maxContradictions = 5

// StoreMemory writes a new memory, or resolves a (title, namespace)
// collision by on_conflict: ERROR fails, VERSION picks "T (n)", MERGE (the
// default) updates the existing memory in place by rules.Merge's rule,
// keeping the version it replaces in the archive (superseded).
// Expired-but-uncollected memories count as existing.
func (s *Store) StoreMemory(ctx context.Context, req *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error) {
	in, err := rules.New(req.GetMemory())
	if err != nil {
		return nil, err
	}
	policy := req.GetOnConflict()
	switch policy {
	case aimemoryv1.ConflictPolicy_CONFLICT_POLICY_UNSPECIFIED, aimemoryv1.ConflictPolicy_CONFLICT_POLICY_MERGE,
		aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR, aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION:
	default:
		return nil, &record.FieldError{Field: "on_conflict", Rule: fmt.Sprintf("must be ERROR, MERGE or VERSION (got %d)", policy)}
	}

	pre := s.analyze(in)
	var resp *aimemoryv1.StoreMemoryResponse
	err = s.writeGoverned(ctx, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Store{Store: req}}, func(w *writeTx) error {
		resp = &aimemoryv1.StoreMemoryResponse{}
		w.pre = pre
		return w.storeMemory(in, policy, resp)
	})
	if err != nil {
		return nil, err
	}
	if resp.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED {
		resp.PotentialContradictions = s.contradictions(resp.Memory)
	}
	return resp, nil
}

// storeMemory is StoreMemory inside a transaction, on a validated record
// (rules.New) that it does not change: also the approval path's executor.
func (w *writeTx) storeMemory(in *aimemoryv1.Memory, policy aimemoryv1.ConflictPolicy, resp *aimemoryv1.StoreMemoryResponse) error {
	// A run may be repeated (group commit): change a copy, answer afresh.
	m := rules.Clone(in)
	existing := w.titleOwner(m.Namespace, m.Title)
	if existing == "" {
		return w.create(m, resp)
	}
	switch policy {
	case aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR:
		return &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: existing}
	case aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION:
		title, err := w.freeVersion(m.Title, m.Namespace)
		if err != nil {
			return err
		}
		m.Title = title
		return w.create(m, resp)
	}
	old, err := w.get(existing)
	if err != nil {
		return err
	}
	if old == nil {
		return fmt.Errorf("title index names missing memory %s", existing)
	}
	merged, err := rules.Merge(old, m, w.now, w.s.ttl, w.principal())
	if err != nil {
		return err
	}
	if err := w.authorize(storage.Write{Op: storage.OpMerge, Old: old, New: merged}); err != nil {
		return err
	}
	if err := w.archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
		return err
	}
	resp.Memory, resp.Outcome = merged, aimemoryv1.StoreOutcome_STORE_OUTCOME_MERGED
	return w.put(old, merged, "memory_store")
}

// create assigns the engine's fields (id, times, expiry, authorship from
// the caller) and writes m as a new memory.
func (w *writeTx) create(m *aimemoryv1.Memory, resp *aimemoryv1.StoreMemoryResponse) error {
	rules.Create(m, w.now, w.s.ttl, w.principal())
	if err := w.authorize(storage.Write{Op: storage.OpStore, New: m}); err != nil {
		return err
	}
	resp.Memory, resp.Outcome = m, aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED
	return w.put(nil, m, "memory_store")
}

// freeVersion is the first of "title (2)" … "title (1024)" not taken in
// namespace.
func (w *writeTx) freeVersion(title, namespace string) (string, error) {
	for n := 2; n <= storage.MaxVersion; n++ {
		t := fmt.Sprintf("%s (%d)", title, n)
		if w.titleOwner(namespace, t) != "" {
			continue
		}
		if err := record.ValidateTitle(t); err != nil {
			return "", err
		}
		return t, nil
	}
	return "", &storage.NoFreeVersionError{Title: title, Namespace: namespace}
}

// contradictions lists up to five other memories of m's namespace, expired
// ones included, that share a word of m's title.
func (s *Store) contradictions(m *aimemoryv1.Memory) []string {
	terms := rules.Dedupe(s.an.Terms(nil, m.Title))
	hits := s.idx.Related(terms, m.Namespace, m.Id, maxContradictions)
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}
