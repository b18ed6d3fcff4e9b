package boltstore

import (
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// removeForGood removes m and every link touching it, live or archived.
func (w *writeTx) removeForGood(m *aimemoryv1.Memory, event string) error {
	if err := deleteArchivedLinks(w.tx, m.Id); err != nil {
		return err
	}
	return w.remove(m, event)
}
