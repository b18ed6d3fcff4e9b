package boltstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// StoreMemory writes a new memory, or resolves a (title, namespace)
// collision by on_conflict: ERROR fails, VERSION picks "T (n)", MERGE (the
// default) updates the existing memory in place by rules.Merge's rule,
// keeping the version it replaces in the archive (superseded).
// Expired-but-uncollected memories count as existing.
func (s *Store) StoreMemory(ctx context.Context, req *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error) {
	in, policy, err := rules.NewStore(req)
	if err != nil {
		return nil, err
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
		resp.PotentialContradictions = ops.Contradictions(s.an, s.idx, resp.Memory)
	}
	return resp, nil
}

// storeMemory is StoreMemory inside a transaction, on a validated record
// (rules.New) that it does not change: also the approval path's executor.
// The step itself is shared with every backend (ops.Store).
func (w *writeTx) storeMemory(in *aimemoryv1.Memory, policy aimemoryv1.ConflictPolicy, resp *aimemoryv1.StoreMemoryResponse) error {
	return ops.Store(opsTx{w}, in, policy, resp)
}

// create writes m as a new memory (ops.Create: engine fields, policy, put).
func (w *writeTx) create(m *aimemoryv1.Memory, resp *aimemoryv1.StoreMemoryResponse) error {
	return ops.Create(opsTx{w}, m, resp)
}

// opsTx is this backend's transaction as the shared write steps see it.
type opsTx struct{ w *writeTx }

func (t opsTx) Context() context.Context { return t.w.ctx }
func (t opsTx) Get(id string) (*aimemoryv1.Memory, error) {
	m, err := t.w.get(id)
	return ops.Visible(t.w.ctx, m), err
}
func (t opsTx) TitleOwner(ns, title string) (string, error) { return t.w.titleOwner(ns, title), nil }
func (t opsTx) Authorize(write storage.Write) error         { return t.w.authorize(write) }
func (t opsTx) Archive(m *aimemoryv1.Memory, reason, ev string) error {
	return t.w.archive(m, reason, ev)
}
func (t opsTx) Put(old, m *aimemoryv1.Memory, ev string) error { return t.w.put(old, m, ev) }
func (t opsTx) Remove(m *aimemoryv1.Memory, ev string) error   { return t.w.removeForGood(m, ev) }
func (t opsTx) Moved(old, m *aimemoryv1.Memory) error          { return t.w.moveEntity(old, m) }
func (t opsTx) Now() int64                                     { return t.w.now }
func (t opsTx) TTL() storage.TTL                               { return t.w.s.ttl }
func (t opsTx) Principal() string                              { return t.w.principal() }
