package pgstore

import (
	"context"
	"io"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The parts of storage.Backend this backend does not have yet. Each
// answers ErrNotImplemented, reading and writing nothing, and the engine
// refuses [storage] backend = "postgres" until none is left (settings).

// Vectors: no vector is ever stored, so none is reported either.
func (s *Store) PutVectors(context.Context, string, []storage.VectorPut) (int, error) {
	return 0, notImplemented("PutVectors")
}
func (s *Store) HasVector(id, model string) bool { return false }
func (s *Store) VectorStatus(model string) (memories, current, other int) {
	return s.idx.Count(), 0, 0
}
func (s *Store) MissingVectors(context.Context, string, string, int) ([]*aimemoryv1.Memory, error) {
	return nil, notImplemented("MissingVectors")
}
func (s *Store) Nearest(context.Context, *aimemoryv1.Filter, []float32, string, int) ([]*aimemoryv1.ScoredMemory, error) {
	return nil, notImplemented("Nearest")
}

// Graph.
func (s *Store) GetLinks(context.Context, *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	return nil, notImplemented("GetLinks")
}
func (s *Store) PutLink(context.Context, *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	return nil, notImplemented("PutLink")
}
func (s *Store) InvalidateLink(context.Context, *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	return nil, notImplemented("InvalidateLink")
}
func (s *Store) LinkTimeline(context.Context, *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error) {
	return nil, notImplemented("LinkTimeline")
}
func (s *Store) RegisterEntity(context.Context, *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	return nil, notImplemented("RegisterEntity")
}
func (s *Store) GetEntityByAlias(context.Context, *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error) {
	return nil, notImplemented("GetEntityByAlias")
}

// Audit.
func (s *Store) AppendAudit(context.Context, *aimemoryv1.AuditRecord) (*aimemoryv1.AuditRecord, error) {
	return nil, notImplemented("AppendAudit")
}
func (s *Store) ListAudit(context.Context, string, int) ([]*aimemoryv1.AuditRecord, error) {
	return nil, notImplemented("ListAudit")
}
func (s *Store) VerifyAudit(context.Context) (*aimemoryv1.VerifyAuditResponse, error) {
	return nil, notImplemented("VerifyAudit")
}

// Archive lifecycle: rows are written and read (corpus.go), not yet
// forgotten into, restored or promoted from.
func (s *Store) Forget(context.Context, *aimemoryv1.ForgetRequest) (*aimemoryv1.ForgetResponse, error) {
	return nil, notImplemented("Forget")
}
func (s *Store) PromoteMemory(context.Context, *aimemoryv1.PromoteMemoryRequest) (*aimemoryv1.PromoteMemoryResponse, error) {
	return nil, notImplemented("PromoteMemory")
}
func (s *Store) Consolidate(context.Context, *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error) {
	return nil, notImplemented("Consolidate")
}
func (s *Store) RestoreMemory(context.Context, *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error) {
	return nil, notImplemented("RestoreMemory")
}

// Governance: standards are read by every write's policy check
// (governance.go) but cannot be set here yet; pending actions are queued
// but not listed or decided.
func (s *Store) SetStandard(context.Context, *aimemoryv1.SetStandardRequest) (*aimemoryv1.SetStandardResponse, error) {
	return nil, notImplemented("SetStandard")
}
func (s *Store) GetStandard(context.Context, *aimemoryv1.GetStandardRequest) (*aimemoryv1.GetStandardResponse, error) {
	return nil, notImplemented("GetStandard")
}
func (s *Store) ClearStandard(context.Context, *aimemoryv1.ClearStandardRequest) (*aimemoryv1.ClearStandardResponse, error) {
	return nil, notImplemented("ClearStandard")
}
func (s *Store) ListPending(context.Context, *aimemoryv1.ListPendingRequest) (*aimemoryv1.ListPendingResponse, error) {
	return nil, notImplemented("ListPending")
}
func (s *Store) ApprovePending(context.Context, *aimemoryv1.DecidePendingRequest) (*aimemoryv1.ApprovePendingResponse, error) {
	return nil, notImplemented("ApprovePending")
}
func (s *Store) RejectPending(context.Context, *aimemoryv1.DecidePendingRequest) (*aimemoryv1.RejectPendingResponse, error) {
	return nil, notImplemented("RejectPending")
}
func (s *Store) RegisterAgent(context.Context, *aimemoryv1.RegisterAgentRequest) (*aimemoryv1.RegisterAgentResponse, error) {
	return nil, notImplemented("RegisterAgent")
}

// Transfer and backup.
func (s *Store) Export(context.Context, func(*aimemoryv1.ExportRecord) error) error {
	return notImplemented("Export")
}
func (s *Store) Import(context.Context, []*aimemoryv1.ExportRecord) ([]*aimemoryv1.ImportResult, error) {
	return nil, notImplemented("Import")
}
func (s *Store) Backup(context.Context, io.Writer) (int64, error) {
	return 0, notImplemented("Backup (use pg_dump)")
}

// Archive listing, purge and statistics.
func (s *Store) ListArchived(context.Context, *aimemoryv1.ListArchivedRequest) (*aimemoryv1.ListArchivedResponse, error) {
	return nil, notImplemented("ListArchived")
}
func (s *Store) PurgeArchive(context.Context, *aimemoryv1.PurgeArchiveRequest) (*aimemoryv1.PurgeArchiveResponse, error) {
	return nil, notImplemented("PurgeArchive")
}
func (s *Store) ArchiveStats(context.Context) (*aimemoryv1.ArchiveStatsResponse, error) {
	return nil, notImplemented("ArchiveStats")
}

// The agent list.
func (s *Store) ListAgents(context.Context, *aimemoryv1.ListAgentsRequest) (*aimemoryv1.ListAgentsResponse, error) {
	return nil, notImplemented("ListAgents")
}
