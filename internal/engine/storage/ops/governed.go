package ops

import (
	"errors"
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// Governed runs a write the namespace policy may queue. write runs a step
// in one transaction of the backend (T is its transaction); when step's
// authorization answers "approve", queue records the pending action in
// that same transaction instead, which then commits, and the caller gets
// the *storage.PendingError with the action's id. Every step authorizes
// before it writes anything; wrote reports a write already made, which
// would make the queueing a lie, so it fails the request.
func Governed[T any](write func(step func(T) error) error, step func(T) error,
	wrote func(T) bool, queue func(T, *storage.PendingError) (string, error)) error {
	var queued *storage.PendingError
	err := write(func(tx T) error {
		queued = nil // a step may run more than once (group commit, retries)
		err := step(tx)
		var pe *storage.PendingError
		if !errors.As(err, &pe) {
			return err
		}
		if wrote(tx) {
			return fmt.Errorf("internal error: %s was queued after it wrote", pe.Op)
		}
		id, err := queue(tx, pe)
		if err != nil {
			return err
		}
		q := *pe
		q.ID = id
		queued = &q
		return nil
	})
	if err == nil && queued != nil {
		return queued
	}
	return err
}
