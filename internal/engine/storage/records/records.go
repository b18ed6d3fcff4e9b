// Package records is the storage the engine serves: storage.Backend
// implemented once over any backend's seam (package seam). Each method
// here is the shell of one operation (validate the request, open the
// backend's transaction, run the step of package ops in it, answer), so a
// rule is written once whichever backend holds the records.
//
// The queries in seam.Native pass through to the backend, which answers
// them from its own indexes.
package records

import (
	"context"
	"io"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Store is storage.Backend over one backend's seam.
type Store struct {
	seam.Native // the backend's own: passed through
	b           seam.Backend
	seen        ops.LastSeen // the agent registry's last-seen times, noted since the last flush
}

// New is the engine's storage over b.
func New(b seam.Backend) *Store { return &Store{Native: b, b: b} }

var _ storage.Backend = (*Store)(nil)

// Below is the backend (storage.Layered): the engine asks it for what it
// offers beyond the seam (Leadership, Capabilities, ...).
func (s *Store) Below() any { return s.b }

// What cannot go through a transaction is the backend's.

func (s *Store) Close() error          { return s.b.Close() }
func (s *Store) SchemaVersion() uint32 { return s.b.SchemaVersion() }
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	return s.b.Backup(ctx, w)
}
func (s *Store) EventsAfter(ctx context.Context, after uint64, limit int) ([]*aimemoryv1.Event, error) {
	return s.b.EventsAfter(ctx, after, limit)
}
func (s *Store) LastSeq(ctx context.Context) (uint64, error) { return s.b.LastSeq(ctx) }

// written, read and governed run step in one transaction (Write, Read,
// writeGoverned) and return its answer: every shell's last part.
func written[R any](ctx context.Context, s *Store, step func(seam.Tx) (R, error)) (R, error) {
	return answer(func(fn func(seam.Tx) error) error { return s.b.Write(ctx, fn) }, step)
}

func read[R any](ctx context.Context, s *Store, step func(seam.Tx) (R, error)) (R, error) {
	return answer(func(fn func(seam.Tx) error) error { return s.b.Read(ctx, fn) }, step)
}

func governed[R any](ctx context.Context, s *Store, payload *aimemoryv1.PendingPayload, step func(seam.Tx) (R, error)) (R, error) {
	return answer(func(fn func(seam.Tx) error) error { return s.writeGoverned(ctx, payload, fn) }, step)
}

// answer is step's answer from the run of it that in committed (a write
// may run it more than once).
func answer[R any](in func(func(seam.Tx) error) error, step func(seam.Tx) (R, error)) (R, error) {
	var resp R
	err := in(func(t seam.Tx) error {
		var err error
		resp, err = step(t)
		return err
	})
	if err != nil {
		var none R
		return none, err
	}
	return resp, nil
}

// writeGoverned is a write the namespace policy may queue (ops.Governed):
// when fn's authorization answers "approve", the pending action, whose
// payload is the request itself, is recorded in the same transaction
// instead, and the caller gets the *storage.PendingError with its id.
func (s *Store) writeGoverned(ctx context.Context, payload *aimemoryv1.PendingPayload, fn func(seam.Tx) error) error {
	return ops.Governed(func(step func(seam.Tx) error) error { return s.b.Write(ctx, step) }, fn,
		seam.Tx.Wrote,
		func(t seam.Tx, pe *storage.PendingError) (string, error) {
			p := storage.NewPendingAction(t.Context(), pe, payload, t.Now(), t.View().Governance())
			return p.Id, t.PutRecord(ops.PendingRecord(p))
		})
}
