package storage

import (
	"context"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The interfaces are what the engine's gRPC services need, one per
// service, in the API's own request and response types: a backend takes a
// request as the wire carries it and owns its validation (the record
// rules of sdk/record), so every backend gives the same answers. The
// conformance suite (storagetest) pins those answers down.

// Memories is the memory records and their keyword index.
type Memories interface {
	StoreMemory(context.Context, *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error)
	GetMemories(context.Context, *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error)
	// ShortIDs: each id's shortest unique prefix over live and archived memories.
	ShortIDs(context.Context, *aimemoryv1.ShortIdsRequest) (*aimemoryv1.ShortIdsResponse, error)
	ListMemories(context.Context, *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error)
	SearchMemories(context.Context, *aimemoryv1.SearchMemoriesRequest) (*aimemoryv1.SearchMemoriesResponse, error)
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

// Graph is links, entities and the namespace tree.
type Graph interface {
	GetLinks(context.Context, *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error)
	PutLink(context.Context, *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error)
	InvalidateLink(context.Context, *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error)
	LinkTimeline(context.Context, *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error)
	RegisterEntity(context.Context, *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error)
	GetEntityByAlias(context.Context, *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error)
	CountNamespaces(context.Context, *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error)
}

// Audit is the append-only, hash-chained audit log.
type Audit interface {
	// AppendAudit assigns seq, time and hashes and appends durably.
	AppendAudit(ctx context.Context, r *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error)
	// ListAudit returns up to limit records, newest first, of one agent or all ("").
	ListAudit(ctx context.Context, agentID string, limit int) ([]*aimemoryv1.AuditRecord, error)
	VerifyAudit(ctx context.Context) (*aimemoryv1.VerifyAuditResponse, error)
}

// Archive is where removed memories are kept.
type Archive interface {
	// Archived is the archive row of id; ErrNotFound when there is none.
	Archived(ctx context.Context, id string) (*Archived, error)
}

// ArchiveReasonTTL marks archive rows written by garbage collection.
const ArchiveReasonTTL = "ttl_expired"

// Archived is a memory collected into the archive, with why and when.
type Archived struct {
	Memory            *aimemoryv1.Memory
	ArchivedAt        int64
	Reason            string
	OriginalTier      string
	OriginalExpiresAt int64
}

// Backend is a whole storage backend, as the engine opens it: bbolt today
// (package boltstore), room for PostgreSQL later.
type Backend interface {
	Memories
	Graph
	Audit
	Archive
	EventLog
	Subscriptions
	Messages
	// SchemaVersion is the layout version the backend reads and writes.
	SchemaVersion() uint32
	Close() error
}
