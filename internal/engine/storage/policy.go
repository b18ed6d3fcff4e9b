package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Op names a write the policy is asked about.
type Op string

// The governed writes: every write path of the API (DESIGN: governance
// checks store, update, delete; promote, forget and consolidate reach the
// engine as these). Touch and GC are not asked: a recall's side effect and
// the expiry a memory already carries are not the caller's writes
// (data-model §4.3, §10).
const (
	OpStore  Op = "store"  // a new memory (StoreMemory, RegisterEntity creating one)
	OpMerge  Op = "merge"  // a store that merged into the memory holding its title
	OpUpdate Op = "update" // UpdateMemory
	OpDelete Op = "delete" // DeleteMemories
	OpLink   Op = "link"   // PutLink, InvalidateLink
	OpAlias  Op = "alias"  // RegisterEntity adding aliases to an existing entity
	// OpPromote: PromoteMemory. Tier mode asks once (Old and New the
	// memory); vertical mode asks about the source (Old = New = source) and
	// again about the copy in the ancestor (Old the memory it merges into,
	// or nil; New the copy), so the ancestor's policy decides too.
	OpPromote Op = "promote"
	// OpConsolidate: Consolidate. Asked about the new memory (New; write
	// in its namespace) and about each source (Old; delete in its
	// namespace), every ask before anything is written.
	OpConsolidate Op = "consolidate"
)

// Forget asks OpDelete about each memory it archives, delete with archive
// OpDelete, and RestoreMemory OpStore (a memory comes back into its
// namespace as a new write would).

// Write is what the policy is asked about: who, which operation, and the
// record before and after.
type Write struct {
	// Caller is the verified identity of the call; nil when the context
	// carries none (in-process callers only).
	Caller *caller.Caller
	Op     Op
	// Old is the record before the write (nil for a new memory), New the
	// record as it will be written (nil for a delete). For link and alias
	// writes both are the memory written about (the link's source, the
	// entity), unchanged.
	Old, New *aimemoryv1.Memory
	// Link writes: the link as it will be written, and its target memory.
	Link   *aimemoryv1.Link
	Target *aimemoryv1.Memory
	// View is the backend's governance state inside the transaction; with
	// it, Authorize applies the namespace policy (Govern) to every write.
	View GovernanceView
}

// Namespaces are the namespaces the write touches, each once.
func (w Write) Namespaces() []string {
	var out []string
	for _, m := range []*aimemoryv1.Memory{w.Old, w.New, w.Target} {
		if m != nil && !slices.Contains(out, m.GetNamespace()) {
			out = append(out, m.GetNamespace())
		}
	}
	return out
}

// Decision is a policy's answer.
type Decision int

const (
	Allow Decision = iota
	Deny
	// Queue: the write needs approval (the governance issue fills this
	// in); the caller gets ErrPending and nothing is written.
	Queue
)

// Verdict is a decision and, for Deny and Queue, the reason the caller sees.
type Verdict struct {
	Decision Decision
	Reason   string
	// Err: a read the decision needed failed (the store is unreachable, a
	// record does not decode). The write fails with it, as the error it is,
	// not as a denial.
	Err error
	// Queue: the namespace whose policy queued the write and its approver rule.
	Namespace, Approver string
}

// WritePolicy decides whether a write may happen. It is called inside the
// write transaction, with the records as they are and will be, so its
// answer holds for what commits. It must not call back into the backend,
// and it may be asked more than once about one write (a backend that
// commits writes in groups re-runs a group without a write that failed),
// so it must have no side effects.
type WritePolicy interface {
	CheckWrite(ctx context.Context, w Write) Verdict
}

// AllowAll is the default policy.
type AllowAll struct{}

// CheckWrite allows every write.
func (AllowAll) CheckWrite(context.Context, Write) Verdict { return Verdict{} }

// Authorize is the check every backend makes, inside the transaction, on
// every governed write: the caller from ctx is filled in, the authorizer
// decides whether it may write every namespace the write touches (the
// guarded namespaces, its scope: authz), then governance and the policy
// are asked. A refusal is ErrDenied (PermissionDenied), a queued write
// ErrPending.
func Authorize(ctx context.Context, p WritePolicy, w Write) error {
	if c, ok := caller.FromContext(ctx); ok {
		w.Caller = &c
	}
	if err := authz.Of(ctx).CheckWrite(string(w.Op), w.Namespaces()...); err != nil {
		return err
	}
	if w.View != nil {
		if err := verdictError(w.Op, Govern(ctx, w)); err != nil {
			return err
		}
	}
	if p == nil {
		return nil
	}
	return verdictError(w.Op, p.CheckWrite(ctx, w))
}

func verdictError(op Op, v Verdict) error {
	if v.Err != nil {
		return fmt.Errorf("%s: governance check: %w", op, v.Err)
	}
	switch v.Decision {
	case Allow:
		return nil
	case Queue:
		return &PendingError{Op: op, Reason: v.Reason, Namespace: v.Namespace, Approver: v.Approver}
	default:
		return &DeniedError{Reason: v.Reason}
	}
}

// Principal is the caller identity of ctx; "" when there is none.
func Principal(ctx context.Context) string {
	c, _ := caller.FromContext(ctx)
	return c.Principal
}
