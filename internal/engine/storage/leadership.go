package storage

import "context"

// Leadership is implemented by a backend that several engines share: a
// background task (expiry collection, archive purge, webhook dispatch,
// change-log pruning) must run on exactly one of them. A backend without
// it belongs to one engine, which always leads.
type Leadership interface {
	// Lead waits until this engine leads task, or ctx ends (its error).
	// lost is closed when the leadership is lost without release (the
	// connection holding it died): the task must stop. release gives it up.
	Lead(ctx context.Context, task string) (lost <-chan struct{}, release func(), err error)
}

// Background leaders' task names.
const (
	TaskGC           = "gc"
	TaskArchivePurge = "archive_purge"
	TaskWebhooks     = "webhook_dispatch"
	TaskPruneChanges = "prune_changes"
)
