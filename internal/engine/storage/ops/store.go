// Package ops holds the write steps every storage backend runs inside its
// own transaction, written once over Tx, so the backends cannot drift
// apart in what a write means (the reference's two backends did).
package ops

import (
	"context"
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Tx is what the shared steps need of a backend's write transaction.
type Tx interface {
	// Context is the request's, with its caller.
	Context() context.Context
	// Get reads a live memory by exact id; nil when absent or when the
	// caller may not read it (Visible): another tenant's memory is not
	// found by any write either.
	Get(id string) (*aimemoryv1.Memory, error)
	// TitleOwner is the id holding (namespace, title); "" when free.
	TitleOwner(namespace, title string) (string, error)
	// Authorize is storage.Authorize for this transaction.
	Authorize(storage.Write) error
	// Archive moves m to the archive for reason (event "" = none).
	Archive(m *aimemoryv1.Memory, reason, event string) error
	// Put writes m over old (nil for a new memory) with its indexes.
	Put(old, m *aimemoryv1.Memory, event string) error
	// Remove deletes m for good, with every link touching it.
	Remove(m *aimemoryv1.Memory, event string) error
	// Moved moves what goes with a memory whose namespace or title an
	// update changes (entity aliases); nothing where there is none.
	Moved(old, m *aimemoryv1.Memory) error
	Now() int64
	TTL() storage.TTL
	Records
}

// Visible is m when the caller of ctx may read it (authz), else nil: what
// a write transaction's Get answers.
func Visible(ctx context.Context, m *aimemoryv1.Memory) *aimemoryv1.Memory {
	if m == nil || !authz.Of(ctx).Reads(m.GetNamespace()) {
		return nil
	}
	return m
}

// writable refuses op into ns unless the caller may write there
// (authz): asked before anything is looked up in ns, so that no conflict
// names a memory of a namespace that is not the caller's.
func writable(tx Tx, op storage.Op, ns string) error {
	return authz.Of(tx.Context()).CheckWrite(string(op), ns)
}

// Store is StoreMemory inside tx, on a validated record (rules.New) that it
// does not change: a new memory, or by conflict policy an error, a
// versioned title, or the one merge rule into the memory holding the title
// (its previous version archived as superseded).
func Store(tx Tx, in *aimemoryv1.Memory, policy aimemoryv1.ConflictPolicy, resp *aimemoryv1.StoreMemoryResponse) error {
	// A run may be repeated (group commit, a retried transaction): change
	// a copy, answer afresh.
	m := rules.Clone(in)
	if err := writable(tx, storage.OpStore, m.Namespace); err != nil {
		return err
	}
	existing, err := tx.TitleOwner(m.Namespace, m.Title)
	if err != nil {
		return err
	}
	if existing == "" {
		return Create(tx, m, resp)
	}
	switch policy {
	case aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR:
		return &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: existing}
	case aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION:
		title, err := FreeVersion(tx, m.Title, m.Namespace)
		if err != nil {
			return err
		}
		m.Title = title
		return Create(tx, m, resp)
	}
	old, err := tx.Get(existing)
	if err != nil {
		return err
	}
	if old == nil { // an inbox message, to messaging, which writes there unread
		return &storage.DeniedError{Reason: fmt.Sprintf("title: %s is taken in namespace %s by a memory this caller may not read; nothing was merged",
			authz.Quote(m.Title), authz.Quote(m.Namespace))}
	}
	merged, err := rules.Merge(old, m, tx.Now(), tx.TTL(), storage.Principal(tx.Context()))
	if err != nil {
		return err
	}
	if err := tx.Authorize(storage.Write{Op: storage.OpMerge, Old: old, New: merged}); err != nil {
		return err
	}
	if err := tx.Archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
		return err
	}
	resp.Memory, resp.Outcome = merged, aimemoryv1.StoreOutcome_STORE_OUTCOME_MERGED
	return tx.Put(old, merged, storage.EventStore)
}

// Create assigns the engine's fields (id, times, expiry, authorship from
// the caller), asks the policy, and writes m as a new memory.
func Create(tx Tx, m *aimemoryv1.Memory, resp *aimemoryv1.StoreMemoryResponse) error {
	rules.Create(m, tx.Now(), tx.TTL(), storage.Principal(tx.Context()))
	if err := tx.Authorize(storage.Write{Op: storage.OpStore, New: m}); err != nil {
		return err
	}
	resp.Memory, resp.Outcome = m, aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED
	return tx.Put(nil, m, storage.EventStore)
}

// FreeVersion is the first of "title (2)" … "title (MaxVersion)" not taken.
func FreeVersion(tx Tx, title, namespace string) (string, error) {
	for n := 2; n <= storage.MaxVersion; n++ {
		t := fmt.Sprintf("%s (%d)", title, n)
		owner, err := tx.TitleOwner(namespace, t)
		if err != nil {
			return "", err
		}
		if owner != "" {
			continue
		}
		if err := record.ValidateTitle(t); err != nil {
			return "", err
		}
		return t, nil
	}
	return "", &storage.NoFreeVersionError{Title: title, Namespace: namespace}
}
