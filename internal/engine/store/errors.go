package store

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; test with errors.Is. Field rule violations are
// *record.FieldError (errors.As).
var (
	ErrNotFound  = errors.New("memory not found")
	ErrConflict  = errors.New("title already exists in namespace")
	ErrAmbiguous = errors.New("ambiguous ID prefix")
	ErrDenied    = errors.New("write denied by policy")
)

// ConflictError: (title, namespace) is taken by another memory.
type ConflictError struct {
	Title, Namespace, ExistingID string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("CONFLICT: memory with title '%s' already exists in namespace '%s' (existing id: %s)", e.Title, e.Namespace, e.ExistingID)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// NoFreeVersionError: on_conflict VERSION found T (2) … T (1024) all taken.
type NoFreeVersionError struct {
	Title, Namespace string
}

func (e *NoFreeVersionError) Error() string {
	return fmt.Sprintf("CONFLICT: titles '%s (2)' to '%s (%d)' are all taken in namespace '%s'", e.Title, e.Title, maxVersion, e.Namespace)
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

// deny wraps a policy's refusal so that errors.Is(err, ErrDenied) holds and
// the message is the policy's own.
type deniedError struct{ err error }

func (e *deniedError) Error() string   { return e.err.Error() }
func (e *deniedError) Unwrap() []error { return []error{ErrDenied, e.err} }
func deny(err error) error             { return &deniedError{err: err} }
