// Package seam is what a storage backend implements: transactions over
// its records (Backend.Read, Backend.Write, each running a function with
// the backend's Tx), what cannot go through a transaction (closing, the
// schema version, a backup, tailing the event log, the clock), and the
// queries it answers natively (Native).
//
// The rules of an operation are written once, above the seam: package
// records implements storage.Backend over a Backend, running the steps of
// package ops in the backend's transactions. A third backend implements
// Backend and Tx, plus storagetest.Checker, and passes storagetest.Run
// through records.New (its conformance test); optionally the storage
// capabilities the engine asks for with storage.As (Capabilities,
// Leadership, DeliveryWaker, SealKeyBinder, ErrorTranslator).
// Native says which queries stay the backend's own, and why.
package seam

import (
	"context"
	"io"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Backend is a storage backend as package records drives it.
type Backend interface {
	// Write runs fn in one write transaction, committed durably before it
	// returns; then the backend applies the transaction's index changes
	// and publishes its events. fn may run more than once (a group commit
	// or a lost race reruns it), so it must start its results afresh.
	Write(ctx context.Context, fn func(Tx) error) error
	// Read runs fn in one read transaction: a consistent snapshot. Writes
	// through its Tx fail.
	Read(ctx context.Context, fn func(Tx) error) error
	// Now is the backend's clock (storage.Options.Now), unix nanoseconds.
	Now() int64
	// Scan runs fn, each of whose reads is a read transaction: bbolt opens
	// one per read, so fn holds none between reads while it sends what it
	// read (a slow consumer never pins the file against a writer that must
	// grow it); PostgreSQL runs them all in one REPEATABLE READ snapshot.
	Scan(ctx context.Context, fn func(read func(func(Tx) error) error) error) error
	// AuditChain is the chain the audit log is hashed with (Options.Audit).
	AuditChain() *audit.Chain
	// Keywords is the backend's text analyzer and in-memory keyword index,
	// current to the commits this engine has applied: what is answered
	// from the index alone (a store's potential contradictions) reads it.
	Keywords() (*keyword.Analyzer, *index.Index)

	// Backup writes a consistent copy of the whole store to w, while
	// writes go on, in the backend's own format; it returns the bytes written.
	Backup(ctx context.Context, w io.Writer) (int64, error)
	storage.EventLog
	// SchemaVersion is the layout version the backend reads and writes.
	SchemaVersion() uint32
	Close() error

	Native
}

// Tx is one transaction of a backend: the union of what the steps of
// package ops need (ops.Tx with its generic ops.Records, ArchiveTx,
// LinkTx, EntityTx, GovRecords), plus the indexes, the audit log and the
// batch reads records' own shells use.
type Tx interface {
	ops.ArchiveTx
	ops.LinkTx
	ops.EntityTx
	ops.GovRecords

	// Versions is id's superseded versions, oldest first.
	Versions(id string) ([]*storage.Archived, error)
	// ArchiveRows visits the archive rows of reason ("" = every reason;
	// "superseded": the superseded versions instead), in any order; with
	// before > 0 only those archived before it (a version's VersionAt), a
	// scheduled purge's read, which need not decode the rest.
	ArchiveRows(reason string, before int64, fn func(*storage.Archived) error) error
	// VersionCounts is how many superseded versions each of ids has.
	VersionCounts(ids []string) (map[string]uint32, error)
	// Links is the links of relation ("" = any) with an end in ids, live
	// or (archived) kept in the archive: out[id] those from id by (target,
	// relation), in[id] those to id by (source, relation); dir OUT or IN
	// reads that side only.
	Links(ids []string, dir aimemoryv1.Direction, relation string, archived bool) (out, in map[string][]*aimemoryv1.Link, err error)
	// Summaries is the id, title and namespace of each of ids that is live
	// and (archived) of each with an archive row, whoever the caller (the
	// graph reads apply the read rule to them). A level summarises hundreds.
	Summaries(ids []string, archived bool) (live, arch map[string]*aimemoryv1.NodeSummary, err error)
	// EachID visits the ids after from in byte order (before it, with
	// back, nearest first), of live memories or (archived) of archive
	// rows, each with its namespace, while fn returns true.
	EachID(archived, back bool, from string, fn func(id, namespace string) bool) error
	// AliasHolders is the entities holding alias folded, in any namespace.
	AliasHolders(folded string) ([]string, error)
	// EachPending visits the pending actions of status at now (ops.Listed;
	// "all": every one), newest first (requested_at, then id), while fn
	// returns true.
	EachPending(status string, now int64, fn func(*aimemoryv1.PendingAction) bool) error
	// As runs fn with the transaction's caller (Context) set to ctx's: an
	// approved action executes as its requester (records' executor).
	As(ctx context.Context, fn func() error) error
	// ForgetMatches is the live memories req matches for the caller,
	// oldest first (rules.NewForget with the backend's analyzer), as the
	// transaction sees them (its own and its batch's writes included).
	ForgetMatches(req *aimemoryv1.ForgetRequest) ([]*aimemoryv1.Memory, error)
	// Expired is every live memory whose expiry is at or before Now,
	// soonest first, then by id.
	Expired() ([]*aimemoryv1.Memory, error)
	// EachTitled visits the live memories of namespace whose title begins
	// with prefix, in title byte order. fn may write in the same transaction.
	EachTitled(namespace, prefix string, fn func(*aimemoryv1.Memory) error) error
	// Wrote reports whether the transaction has written anything yet
	// (ops.Governed refuses to queue a write already made).
	Wrote() bool

	// The audit log, by seq.
	// EachAudit visits the log's records after seq after, in seq order, at
	// most limit (0: all); r is nil when the stored record does not decode.
	EachAudit(after uint64, limit int, fn func(seq uint64, r *aimemoryv1.AuditRecord) error) error
	// RecentAudit is the newest limit records, of agent ("" = any).
	RecentAudit(agent string, limit int) ([]*aimemoryv1.AuditRecord, error)
	// AuditHead is the head the backend keeps apart from the log (kept
	// false: none, the last record is the head); in a write it is locked
	// against other engines' appends.
	AuditHead() (h audit.Head, kept bool, err error)
	// PutAudit writes r under its seq, which holds none; a kept head moves
	// to r when r is further.
	PutAudit(r *aimemoryv1.AuditRecord) error

	// What Import writes records with, as stored, whoever asks (only
	// hosts reach it). Memories is the live memories among ids.
	Memories(ids []string) (map[string]*aimemoryv1.Memory, error)
	// TitleOwners is the id holding each of keys that is taken.
	TitleOwners(keys []NSTitle) (map[NSTitle]string, error)
}

// NSTitle is a title in its namespace, which one memory holds at most.
type NSTitle struct{ Namespace, Title string }

// Native is the part of storage.Backend each backend answers itself;
// records passes these through. Each stays below the seam because its two
// versions differ for a reason a record-by-record Tx would lose:
//
//   - ListMemories, SearchMemories, Stats, CountNamespaces, storage.Corpus,
//     storage.Vectors (Nearest): answered from the in-memory index and
//     vectors (PostgreSQL's kept current by catch-up) or in one SQL query,
//     not by visiting records.
//   - HasExpired: one index probe (a bbolt cursor, an SQL EXISTS), asked
//     on every collection tick.
//   - ArchiveStats: its sizes are each backend's own encoding, and the
//     versions of a full grant are counted without decoding one (bbolt
//     sums row lengths, PostgreSQL counts in SQL); over ArchiveRows every
//     superseded version, the archive's largest part, would be decoded.
//   - storage.Subscriptions but DeleteSubscription and NarrowGrants:
//     PostgreSQL claims deliveries with leases and SKIP LOCKED across
//     engines, bbolt under its one writer; PutSubscription returns the
//     start point (FromSeq) the backend takes in its transaction, which a
//     record does not carry; ListSubscriptions reads the counters
//     PostgreSQL keeps apart (subscription_stats).
type Native interface {
	// Memories, but StoreMemory, GetMemories, ShortIDs, TouchMemories,
	// UpdateMemory, DeleteMemories and CollectGarbage.
	ListMemories(context.Context, *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error)
	SearchMemories(context.Context, *aimemoryv1.SearchMemoriesRequest, *storage.Hybrid) (*aimemoryv1.SearchMemoriesResponse, error)
	HasExpired(context.Context) (bool, error)
	Stats(context.Context) (*aimemoryv1.StatsResponse, error)
	Count() int

	storage.Corpus
	storage.Vectors

	// Graph: CountNamespaces only.
	CountNamespaces(context.Context, *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error)

	// Archive, but Forget, PromoteMemory, RestoreMemory, Consolidate,
	// Archived, GetArchived, ListArchived and PurgeArchive.
	ArchiveStats(context.Context) (*aimemoryv1.ArchiveStatsResponse, error)

	// Subscriptions, but DeleteSubscription and NarrowGrants.
	PutSubscription(context.Context, *storage.Subscription) error
	ListSubscriptions(context.Context) ([]*storage.Subscription, error)
	DeliveryState(ctx context.Context, id string, max int) (storage.DeliveryState, error)
	DueDeliveries(ctx context.Context, now int64, limit int, full func(subscriptionID string) bool,
		busy func(subscriptionID string, seq uint64) bool) (due []*storage.Delivery, next int64, err error)
	SettleDelivery(ctx context.Context, queuedAt int64, d *storage.Delivery, o storage.Outcome) error
}
