package storage

// Capability is one named way backends differ, as the backend in use has
// it: `doctor` reports them, so a difference is never silent.
type Capability struct {
	Name   string
	On     bool
	Detail string // how, or why not
}

// Capabilities is a backend that reports its capability flags.
type Capabilities interface {
	Capabilities() []Capability
}

// The capability names.
const (
	// CapVectorIndex: Nearest uses an approximate index in the database
	// (pgvector); off, it is the exact cosine scan of an in-memory copy,
	// whose answers every backend shares.
	CapVectorIndex = "vector_index"
	// CapSharedStore: several engines may serve one store at once.
	CapSharedStore = "shared_store"
	// CapBackup: Backup writes a consistent copy while writes go on; off,
	// the backend's own tools take backups (pg_dump).
	CapBackup = "backup"
	// CapBackgroundLeaders: background tasks (archive purge, webhook
	// dispatch, change-log pruning) run on one engine at a time, chosen by
	// advisory lock; off, the one engine runs them all.
	CapBackgroundLeaders = "background_leaders"
	// CapIndexFromChangeLog: the keyword index is a per-engine copy fed by
	// the database's change table (ranking is computed in Go, identically).
	CapIndexFromChangeLog = "index_cache_from_change_log"
	// CapWebhookKey: this engine holds the webhook key the database's
	// secrets are sealed with; off, it serves memory but dispatches no
	// webhook and takes no subscription with a secret.
	CapWebhookKey = "webhook_key"
)
