package pgstore

import (
	"errors"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// TEMPORARY (deleted at merge): the link steps the archive lifecycle
// calls, which pggraph provides over its link tables. Until then no link
// can exist in this backend, so there is none to read, revive, move or
// drop; writing one (vertical promote, consolidate) fails.

// reviveLinks: restore, archived links of id whose other end is live
// become live. NOTE for the merge: the lifecycle needs the counts
// (RestoreMemoryResponse.links_restored, links_kept), so this signature
// returns them; the contract's returned only an error.
func (w *writeTx) reviveLinks(id string) (revived, kept uint32, err error) { return 0, 0, nil }

// readLink is the live link source → target of relation; nil when none
// (boltstore's readLink).
func (w *writeTx) readLink(source, target, relation string) (*aimemoryv1.Link, error) {
	return nil, nil
}

// writeLink writes a live link as it is, replacing the one of its key
// (boltstore's putLink(tx, l): no policy question, no event).
func (w *writeTx) writeLink(l *aimemoryv1.Link) error {
	return errors.New("stub: links are not built in this backend yet (pggraph)")
}

// relinkArchived moves the archived links of from onto to (a restore that
// merges): live when the other end is live, else kept archived; a link
// joining to to itself, or that to already has, is dropped (boltstore's
// writeTx.relinkArchived).
func (w *writeTx) relinkArchived(from, to string) (moved, kept uint32, err error) { return 0, 0, nil }

// dropArchivedLinks deletes the archived links touching ids, purged for
// good (boltstore's deleteArchivedLinks).
func (w *writeTx) dropArchivedLinks(ids []string) error { return nil }
