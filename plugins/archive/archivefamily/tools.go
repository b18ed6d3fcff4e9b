package archivefamily

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var (
	listArgs    = sdk.ArgNames(listSchema)
	restoreArgs = sdk.ArgNames(restoreSchema)
	purgeArgs   = sdk.ArgNames(purgeSchema)
	statsArgs   = sdk.ArgNames(statsSchema)
)

// Bounds of the arguments.
const (
	maxLimit   = 1000
	maxDays    = 100 * 365
	maxIDs     = 1000
	maxListed  = 100  // memories a purge answer names (the engine's bound too)
	contentCut = 2000 // bytes of content a list entry shows
)

// entry is one archived row or version as results show it: no empty fields.
type entry struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Namespace  string          `json:"namespace"`
	Tier       string          `json:"tier"`
	Content    string          `json:"content"`
	Tags       []string        `json:"tags,omitempty"`
	Priority   int32           `json:"priority"`
	Confidence float64         `json:"confidence"`
	Source     string          `json:"source,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	CreatedAt  string          `json:"created_at"`
	UpdatedAt  string          `json:"updated_at,omitempty"`
	ArchivedAt string          `json:"archived_at"`
	Reason     string          `json:"reason"`
	Versions   uint32          `json:"versions,omitempty"` // superseded versions kept of this id
}

func newEntry(a *aimemoryv1.ArchivedMemory, cut bool) entry {
	m := a.GetMemory()
	e := entry{
		ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace(), Tier: m.GetTier(),
		Content: m.GetContent(), Tags: m.GetTags(), Priority: m.GetPriority(), Confidence: m.GetConfidence(),
		Source: m.GetSource(), CreatedAt: record.FormatTime(m.GetCreatedAt()), ArchivedAt: record.FormatTime(a.GetArchivedAt()),
		Reason: a.GetReason(),
	}
	if u := m.GetUpdatedAt(); u != m.GetCreatedAt() {
		e.UpdatedAt = record.FormatTime(u)
	}
	if meta := m.GetMetadataJson(); len(meta) > 0 && string(meta) != "{}" && json.Valid(meta) {
		e.Metadata = meta
	}
	if cut && len(e.Content) > contentCut {
		n := contentCut
		for n > 0 && !utf8.RuneStart(e.Content[n]) {
			n--
		}
		e.Content = fmt.Sprintf("%s…[%d more bytes; memory_archive_list {id: %s}]", e.Content[:n], len(e.Content)-n, e.ID)
	}
	return e
}

// listResult: a page of removed memories, or one id's history.
type listResult struct {
	Archived []entry `json:"archived"`
	Count    int     `json:"count"`
	Total    uint32  `json:"total,omitempty"`
	Versions []entry `json:"versions,omitempty"` // with id: superseded versions, oldest first
}

func listRequest(call sdk.Call) (id string, req *aimemoryv1.ListArchivedRequest, err error) {
	a, err := sdk.ParseArgs(call.Arguments, listArgs)
	if err != nil {
		return "", nil, err
	}
	req = &aimemoryv1.ListArchivedRequest{}
	if id, err = a.Str("id", ""); err != nil {
		return "", nil, err
	}
	if _, given := a.Value("id"); given {
		if err := record.ValidateID("id", id); err != nil {
			return "", nil, err
		}
	}
	if req.Namespace, err = a.NamespaceFilter("namespace"); err != nil {
		return "", nil, err
	}
	limit, err := a.Integer("limit", 50, 1, maxLimit)
	if err != nil {
		return "", nil, err
	}
	offset, err := a.Integer("offset", 0, 0, 1<<31-1)
	if err != nil {
		return "", nil, err
	}
	req.Limit, req.Offset = uint32(limit), uint32(offset)
	if id != "" && (req.Namespace != "" || offset != 0) {
		return "", nil, sdk.Errorf("id: lists one memory's history; namespace and offset do not apply")
	}
	return id, req, nil
}

func (s *service) list(ctx context.Context, call sdk.Call) (any, error) {
	id, req, err := listRequest(call)
	if err != nil {
		return nil, err
	}
	if id != "" {
		resp, err := s.eng.GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{id}, IncludeVersions: true})
		if err != nil {
			return nil, sdk.EngineError(err)
		}
		out := listResult{Archived: []entry{}}
		for _, a := range resp.GetArchived() {
			out.Archived = append(out.Archived, newEntry(a, false))
		}
		for _, v := range resp.GetVersions() {
			out.Versions = append(out.Versions, newEntry(v, false))
		}
		out.Count = len(out.Archived)
		if out.Count == 0 && len(out.Versions) == 0 {
			return nil, sdk.Errorf("not found in archive: %s", record.Quote(id))
		}
		return out, nil
	}
	resp, err := s.eng.ListArchived(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := listResult{Archived: make([]entry, 0, len(resp.GetArchived())), Total: resp.GetTotal()}
	for i, a := range resp.GetArchived() {
		e := newEntry(a, true)
		if i < len(resp.GetVersions()) {
			e.Versions = resp.GetVersions()[i]
		}
		out.Archived = append(out.Archived, e)
	}
	out.Count = len(out.Archived)
	return out, nil
}

// restoreResult is memory_archive_restore's answer.
type restoreResult struct {
	Restored      bool   `json:"restored"`
	ID            string `json:"id"`
	Title         string `json:"title"`
	Namespace     string `json:"namespace"`
	Tier          string `json:"tier"`
	ExpiresAt     string `json:"expires_at,omitempty"`
	MergedInto    string `json:"merged_into,omitempty"`
	LinksRestored uint32 `json:"links_restored,omitempty"`
	LinksKept     uint32 `json:"links_kept,omitempty"` // still archived: their other end is not live
}

func restoreRequest(call sdk.Call) (*aimemoryv1.RestoreMemoryRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, restoreArgs)
	if err != nil {
		return nil, err
	}
	id, err := a.TargetID("id")
	if err != nil {
		return nil, err
	}
	req := &aimemoryv1.RestoreMemoryRequest{Id: id}
	if _, given := a.Value("version"); given {
		v, err := a.Str("version", "")
		if err != nil {
			return nil, err
		}
		if req.VersionAt, err = record.ParseTime("version", v); err != nil {
			return nil, err
		}
		if req.VersionAt <= 0 {
			return nil, sdk.Errorf("version: must be an archived_at from memory_archive_list (got %s)", record.Quote(v))
		}
	}
	onConflict, err := a.OneOf("on_conflict", "error", "error", "merge")
	if err != nil {
		return nil, err
	}
	req.Merge = onConflict == "merge"
	return req, nil
}

func (s *service) restore(ctx context.Context, call sdk.Call) (any, error) {
	req, err := restoreRequest(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.RestoreMemory(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	m := resp.GetMemory()
	out := restoreResult{
		Restored: true, ID: req.Id, Title: m.GetTitle(), Namespace: m.GetNamespace(), Tier: m.GetTier(),
		ExpiresAt: record.FormatTime(m.GetExpiresAt()), LinksRestored: resp.GetLinksRestored(), LinksKept: resp.GetLinksKept(),
	}
	if resp.GetMerged() {
		out.MergedInto = m.GetId()
	}
	return out, nil
}

// purgeResult is memory_archive_purge's answer.
type purgeResult struct {
	Purged         *uint32     `json:"purged,omitempty"`
	WouldPurge     *uint32     `json:"would_purge,omitempty"`
	VersionsPurged uint32      `json:"versions_purged,omitempty"`
	DryRun         bool        `json:"dry_run,omitempty"`
	Memories       []memoryRef `json:"memories,omitempty"`
	More           int         `json:"more,omitempty"`
	NotFound       []string    `json:"not_found,omitempty"`
}

type memoryRef struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Namespace string `json:"namespace"`
}

// purgeRequest takes exactly one of older_than_days and ids: a missing,
// mistyped or out-of-range argument is an error, never "everything".
func (s *service) purgeRequest(call sdk.Call) (*aimemoryv1.PurgeArchiveRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, purgeArgs)
	if err != nil {
		return nil, err
	}
	req := &aimemoryv1.PurgeArchiveRequest{}
	if req.DryRun, err = a.Bool("dry_run", false); err != nil {
		return nil, err
	}
	_, hasDays := a.Value("older_than_days")
	_, hasIDs := a.Value("ids")
	if hasDays == hasIDs {
		return nil, sdk.Errorf("older_than_days or ids: give exactly one (nothing is purged by default)")
	}
	if hasDays {
		days, err := a.Integer("older_than_days", 0, 0, maxDays)
		if err != nil {
			return nil, err
		}
		req.Before = s.now().Add(-time.Duration(days) * 24 * time.Hour).UnixNano()
		return req, nil
	}
	if req.Ids, err = a.StringList("ids"); err != nil {
		return nil, err
	}
	if len(req.Ids) == 0 || len(req.Ids) > maxIDs {
		return nil, sdk.Errorf("ids: must hold 1 to %d ids (got %d)", maxIDs, len(req.Ids))
	}
	for i, id := range req.Ids {
		if err := record.ValidateTargetID(fmt.Sprintf("ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func (s *service) purge(ctx context.Context, call sdk.Call) (any, error) {
	req, err := s.purgeRequest(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.PurgeArchive(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	n := resp.GetPurged()
	out := purgeResult{VersionsPurged: resp.GetVersionsPurged(), DryRun: req.DryRun, NotFound: resp.GetNotFound()}
	if req.DryRun {
		out.WouldPurge = &n
	} else {
		out.Purged = &n
	}
	for _, m := range resp.GetMemories()[:min(len(resp.GetMemories()), maxListed)] {
		out.Memories = append(out.Memories, memoryRef{ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace()})
	}
	out.More = int(n) - len(out.Memories)
	return out, nil
}

// statsResult is memory_archive_stats's answer (arrays count desc).
type statsResult struct {
	ArchivedTotal uint64        `json:"archived_total"`
	ByReason      []reasonCount `json:"by_reason"`
	ByNamespace   []nsCount     `json:"by_namespace"`
	OldestAt      string        `json:"oldest_at,omitempty"`
	NewestAt      string        `json:"newest_at,omitempty"`
	SizeBytes     uint64        `json:"size_bytes"`
	Versions      uint64        `json:"versions,omitempty"`
}

type reasonCount struct {
	Reason string `json:"reason"`
	Count  uint64 `json:"count"`
}

type nsCount struct {
	Namespace string `json:"namespace"`
	Count     uint64 `json:"count"`
}

func (s *service) stats(ctx context.Context, call sdk.Call) (any, error) {
	if _, err := sdk.ParseArgs(call.Arguments, statsArgs); err != nil {
		return nil, err
	}
	resp, err := s.eng.ArchiveStats(ctx, &aimemoryv1.ArchiveStatsRequest{})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := statsResult{
		ArchivedTotal: resp.GetTotal(), ByReason: []reasonCount{}, ByNamespace: []nsCount{},
		OldestAt: record.FormatTime(resp.GetOldestAt()), NewestAt: record.FormatTime(resp.GetNewestAt()),
		SizeBytes: resp.GetSizeBytes(), Versions: resp.GetVersions(),
	}
	for _, c := range resp.GetByReason() {
		out.ByReason = append(out.ByReason, reasonCount{Reason: c.GetKey(), Count: c.GetCount()})
	}
	for _, c := range resp.GetByNamespace() {
		out.ByNamespace = append(out.ByNamespace, nsCount{Namespace: c.GetKey(), Count: c.GetCount()})
	}
	return out, nil
}
