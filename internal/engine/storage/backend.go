package storage

import (
	"context"
	"io"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The interfaces are what the engine's gRPC services need, one per
// service, in the API's own request and response types: the storage
// takes a request as the wire carries it and owns its validation (the
// record rules of sdk/record), so every backend gives the same answers.
// The conformance suite (storagetest) pins those answers down.

// Memories is the memory records and their keyword index.
type Memories interface {
	StoreMemory(context.Context, *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error)
	GetMemories(context.Context, *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error)
	// ShortIDs: each id's shortest unique prefix over live and archived memories.
	ShortIDs(context.Context, *aimemoryv1.ShortIdsRequest) (*aimemoryv1.ShortIdsResponse, error)
	ListMemories(context.Context, *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error)
	// SearchMemories blends in the vectors nearest hy's (nil: keyword only).
	SearchMemories(context.Context, *aimemoryv1.SearchMemoriesRequest, *Hybrid) (*aimemoryv1.SearchMemoriesResponse, error)
	TouchMemories(context.Context, *aimemoryv1.TouchMemoriesRequest) (*aimemoryv1.TouchMemoriesResponse, error)
	UpdateMemory(context.Context, *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.UpdateMemoryResponse, error)
	DeleteMemories(context.Context, *aimemoryv1.DeleteMemoriesRequest) (*aimemoryv1.DeleteMemoriesResponse, error)
	// HasExpired reports, cheaply, whether CollectGarbage has anything to do.
	HasExpired(context.Context) (bool, error)
	// CollectGarbage removes expired memories, archiving them on request.
	CollectGarbage(context.Context, *aimemoryv1.CollectGarbageRequest) (*aimemoryv1.CollectGarbageResponse, error)
	Stats(context.Context) (*aimemoryv1.StatsResponse, error)
	// Count is the number of stored memories (expired-but-uncollected
	// included), cheap enough for every Health call.
	Count() int
}

// Hybrid is a search's query embedding, made by the engine's embedder
// from the query: never a request field, so a caller cannot supply it.
type Hybrid struct {
	Vector []float32
	Model  string
	// A vector candidate's least cosine; 0 = vecset.DefaultMinSimilarity.
	MinSimilarity float64
	// The share of the query's content words the model has no vocabulary
	// entry for (vecset.Blend); −1 = not known (an endpoint's model).
	Unread float64
}

// Corpus is the keyword index's statistics (package corpus computes them
// from the index's document frequencies and matches).
type Corpus interface {
	TermStats(context.Context, *aimemoryv1.TermStatsRequest) (*aimemoryv1.TermStatsResponse, error)
	RelatedTerms(context.Context, *aimemoryv1.RelatedTermsRequest) (*aimemoryv1.RelatedTermsResponse, error)
}

// Vectors are the embeddings kept beside the records (one per memory and
// model, always of the record's current text).
type Vectors interface {
	// PutVectors stores each vector as its memory's embedding of text by
	// model, in one transaction, unless the memory is gone or its title and
	// content are no longer that text; it returns how many were stored.
	PutVectors(ctx context.Context, model string, puts []VectorPut) (stored int, err error)
	// HasVector: id has a vector by model.
	HasVector(id, model string) bool
	// VectorStatus: live memories, those with a vector by model, vectors by other models.
	VectorStatus(model string) (memories, current, other int)
	// MissingVectors: up to limit memories after the id after, in id order, with none by model.
	MissingVectors(ctx context.Context, model, after string, limit int) ([]*aimemoryv1.Memory, error)
	// Nearest: the live memories matching the filter closest to v (score: cosine).
	Nearest(ctx context.Context, filter *aimemoryv1.Filter, v []float32, model string, limit int) ([]*aimemoryv1.ScoredMemory, error)
}

// VectorPut is one embedding to store: of memory ID's text.
type VectorPut struct {
	ID, Text string
	Vector   []float32
}

// Graph is links, entities and the namespace tree.
type Graph interface {
	GetLinks(context.Context, *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error)
	// Traverse is memory_kg_query's walk (ops.TraverseAnswer).
	Traverse(context.Context, *aimemoryv1.TraverseRequest) (*aimemoryv1.TraverseResponse, error)
	PutLink(context.Context, *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error)
	InvalidateLink(context.Context, *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error)
	LinkTimeline(context.Context, *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error)
	RegisterEntity(context.Context, *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error)
	GetEntityByAlias(context.Context, *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error)
	CountNamespaces(context.Context, *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error)
}

// Audit is the append-only, hash-chained audit log, chained with
// Options.Audit (package audit holds the rule; audit.Log the engine's pin).
type Audit interface {
	// AppendAudit assigns seq, time and hashes and appends durably.
	AppendAudit(ctx context.Context, r *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error)
	// ListAudit returns up to limit records, newest first, of one agent or all ("").
	ListAudit(ctx context.Context, agentID string, limit int) ([]*aimemoryv1.AuditRecord, error)
	// AuditRecordAt is the record stored under seq; nil when there is none.
	AuditRecordAt(ctx context.Context, seq uint64) (*aimemoryv1.AuditRecord, error)
	// VerifyAudit recomputes the chain from one snapshot (audit.Verifier);
	// it must hold pin, the head the engine pinned (zero: none).
	VerifyAudit(ctx context.Context, pin audit.Head) (*aimemoryv1.VerifyAuditResponse, error)
	// ExportAudit calls each with every record in seq order, each once:
	// migrate's copy. It holds no transaction while each runs (bbolt
	// reads in batches) or reads one snapshot (PostgreSQL).
	ExportAudit(ctx context.Context, each func(*aimemoryv1.AuditRecord) error) error
}

// AuditImporter takes records of another store's audit log as they were
// (seq, time and hashes kept): migrate's target. Each result is created,
// unchanged (already there, identical) or refused (another record holds
// its seq).
type AuditImporter interface {
	ImportAudit(ctx context.Context, records []*aimemoryv1.AuditRecord) ([]*aimemoryv1.ImportResult, error)
}

// Archive is where removed memories are kept, and the lifecycle writes
// that go through it (one archive operation: every removal path archives
// the same way, keeping metadata and links).
type Archive interface {
	// Archived is the archive row of id; ErrNotFound when there is none.
	Archived(ctx context.Context, id string) (*Archived, error)
	GetArchived(context.Context, *aimemoryv1.GetArchivedRequest) (*aimemoryv1.GetArchivedResponse, error)
	Forget(context.Context, *aimemoryv1.ForgetRequest) (*aimemoryv1.ForgetResponse, error)
	PromoteMemory(context.Context, *aimemoryv1.PromoteMemoryRequest) (*aimemoryv1.PromoteMemoryResponse, error)
	RestoreMemory(context.Context, *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error)
	// Consolidate writes one new memory from sources and archives them
	// (reason consolidated), linked derived_from, in one transaction.
	Consolidate(context.Context, *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error)
	ListArchived(context.Context, *aimemoryv1.ListArchivedRequest) (*aimemoryv1.ListArchivedResponse, error)
	// PurgeArchive deletes archive rows for good, by an explicit cut-off
	// or explicit ids (exactly one; never everything by default).
	PurgeArchive(context.Context, *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, error)
	ArchiveStats(context.Context) (*aimemoryv1.ArchiveStatsResponse, error)
}

// Transfer is every record out, as stored, and records back in as they
// were (ids, authorship, times kept): export and import.
type Transfer interface {
	// Export calls each with every record, in the order Import needs:
	// a record there throughout exactly once, one written meanwhile or
	// not, and nothing Import would refuse (a link only with its
	// memories). bbolt reads in batches, holding no transaction while
	// each runs; PostgreSQL reads one snapshot.
	Export(ctx context.Context, each func(*aimemoryv1.ExportRecord) error) error
	// Import writes records in one transaction; each result is created,
	// unchanged (already there, identical) or refused (and why).
	Import(ctx context.Context, records []*aimemoryv1.ExportRecord) ([]*aimemoryv1.ImportResult, error)
}

// Archive reasons.
const (
	ArchiveReasonTTL          = "ttl_expired" // garbage collection
	ArchiveReasonForget       = "forget"
	ArchiveReasonDelete       = "delete"       // DeleteMemories with archive
	ArchiveReasonSuperseded   = "superseded"   // the version an update or a merging store replaced
	ArchiveReasonConsolidated = "consolidated" // a source of Consolidate
)

// Consolidate's bounds on its sources.
const (
	MinConsolidate = 2
	MaxConsolidate = 100
)

// MaxReported bounds the memories a bulk lifecycle answer lists (Forget).
const MaxReported = 100

// Archived is a memory collected into the archive, with why and when.
type Archived struct {
	Memory            *aimemoryv1.Memory
	ArchivedAt        int64
	Reason            string
	OriginalTier      string
	OriginalExpiresAt int64
	// VersionAt is a superseded version's key time (what Version and
	// restore's version_at name; an imported version's may differ from
	// ArchivedAt); 0 for an archive row.
	VersionAt int64
}

// Backend is the whole storage, as the engine serves it: package records
// over a backend's seam, bbolt (package boltstore) or PostgreSQL (package
// pgstore).
type Backend interface {
	Memories
	Corpus
	Vectors
	Graph
	Audit
	Archive
	Governance
	Transfer
	// Backup writes a consistent copy of the whole store to w, while
	// writes go on, in the backend's own file format; it returns the bytes written.
	Backup(ctx context.Context, w io.Writer) (int64, error)
	EventLog
	Subscriptions
	Messages
	// SchemaVersion is the layout version the backend reads and writes.
	SchemaVersion() uint32
	Close() error
}

// ArchiveReasons are the reasons a row can carry, for filters.
var ArchiveReasons = []string{ArchiveReasonTTL, ArchiveReasonForget, ArchiveReasonDelete, ArchiveReasonSuperseded}
