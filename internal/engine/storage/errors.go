package storage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
)

// Sentinel errors every backend returns; test with errors.Is. The engine's
// gRPC layer maps them to status codes. Field rule violations are
// *record.FieldError (errors.As): those rules are shared with plugins.
var (
	ErrNotFound  = errors.New("memory not found")
	ErrConflict  = errors.New("title already exists in namespace")
	ErrAmbiguous = errors.New("ambiguous ID prefix")
	ErrDenied    = authz.ErrDenied // every refusal of a write, the authorizer's and the policy's
	// ErrPending: the policy queued the write for approval; nothing was written.
	ErrPending = errors.New("write pending approval")
	// ErrUnavailable: the backend's database server cannot be reached (a
	// shared database restarting); the call did nothing it acknowledged.
	ErrUnavailable = errors.New("storage database unavailable")
)

// ErrorTranslator is implemented by a backend whose errors include its
// server's: TranslateError turns one that means "unreachable" into a short
// ErrUnavailable and returns any other unchanged.
type ErrorTranslator interface {
	TranslateError(error) error
}

// ConflictError: (title, namespace) is taken by another memory.
type ConflictError struct {
	Title, Namespace, ExistingID string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("CONFLICT: memory with title '%s' already exists in namespace '%s' (existing id: %s)", e.Title, e.Namespace, e.ExistingID)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// MaxVersion is the last title suffix on_conflict VERSION tries.
const MaxVersion = 1024

// NoFreeVersionError: on_conflict VERSION found T (2) … T (MaxVersion) all taken.
type NoFreeVersionError struct {
	Title, Namespace string
}

func (e *NoFreeVersionError) Error() string {
	return fmt.Sprintf("CONFLICT: titles '%s (2)' to '%s (%d)' are all taken in namespace '%s'", e.Title, e.Title, MaxVersion, e.Namespace)
}

func (e *NoFreeVersionError) Is(target error) bool { return target == ErrConflict }

// AmbiguousError: an id prefix matched several memories.
type AmbiguousError struct {
	Prefix string
	IDs    []string // the first few candidates
	Count  int
}

func (e *AmbiguousError) Error() string {
	ids := strings.Join(e.IDs, ", ")
	if e.Count > len(e.IDs) {
		ids += ", …"
	}
	return fmt.Sprintf("ambiguous ID prefix '%s': %d matches: %s", e.Prefix, e.Count, ids)
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// DeniedError is a refusal (the authorizer's or a policy's);
// errors.Is(err, ErrDenied) holds and the message is the reason.
type DeniedError = authz.DeniedError

// PendingError: the policy queued the write for approval (the governance
// issue gives it a request id); errors.Is(err, ErrPending) holds.
type PendingError struct {
	Op     Op
	Reason string
	// Set by the governance gate and the backend that queued the write.
	Namespace, Approver string
	ID                  string // the pending action; "" when none was recorded
}

func (e *PendingError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("%s queued for approval as pending action %s; nothing is written until someone else approves it: %s", e.Op, e.ID, e.Reason)
	}
	msg := fmt.Sprintf("%s pending approval: nothing was written", e.Op)
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

func (e *PendingError) Is(target error) bool { return target == ErrPending }

// AliasTakenError: an alias is held by another entity in the namespace, or
// a canonical name is the title of a memory that is not an entity.
type AliasTakenError struct {
	Field, Alias, Namespace string
	EntityID, EntityName    string // the holder; EntityName "" = not an entity
}

func (e *AliasTakenError) Error() string {
	if e.EntityName == "" {
		return fmt.Sprintf("%s: memory %s already has the title '%s' in namespace '%s' and is not an entity", e.Field, e.EntityID, e.Alias, e.Namespace)
	}
	return fmt.Sprintf("%s: alias '%s' is already held in namespace '%s' by entity %s ('%s')", e.Field, e.Alias, e.Namespace, e.EntityID, e.EntityName)
}

func (e *AliasTakenError) Is(target error) bool { return target == ErrConflict }

// SchemaTooNewError is returned by a backend's Open for data written by a
// newer build.
type SchemaTooNewError struct{ Found, Known uint32 }

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this build knows (%d): upgrade ai-memory", e.Found, e.Known)
}
