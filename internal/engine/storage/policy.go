package storage

import (
	"context"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Op names a write the policy is asked about.
type Op string

// The governed writes (DESIGN: governance checks store, update, delete;
// promote, forget and consolidate reach the engine as these). Touch and GC
// are not asked: a recall's side effect and the expiry a memory already
// carries are not the caller's writes (data-model §4.3, §10).
const (
	OpStore  Op = "store"
	OpUpdate Op = "update"
	OpDelete Op = "delete"
)

// WritePolicy decides whether a write may happen. It is called inside the
// write transaction, with the memory as it will be written (store, update)
// or as it is (delete), so its answer holds for what commits. It must not
// call back into the backend. A non-nil error refuses the write; the caller
// sees it as ErrDenied (gRPC PermissionDenied) with the policy's message.
type WritePolicy interface {
	CheckWrite(ctx context.Context, op Op, namespace string, m *aimemoryv1.Memory) error
}

// AllowAll is the default policy.
type AllowAll struct{}

// CheckWrite allows every write.
func (AllowAll) CheckWrite(context.Context, Op, string, *aimemoryv1.Memory) error { return nil }
