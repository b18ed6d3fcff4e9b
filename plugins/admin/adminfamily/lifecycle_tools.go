package adminfamily

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// lifecycleTools: memory_update, memory_delete, memory_forget, memory_gc,
// memory_promote (spec/family-admin.md with issue 9's fixes). Every
// removal goes through the engine's archive; every write is checked by
// the engine's policy against the caller the host resolved.
func (s *service) lifecycleTools() []sdk.Tool {
	notDestructive := sdk.Hints{Destructive: sdk.Bool(false)}
	return []sdk.Tool{
		{Name: "memory_update", Description: updateDesc, Schema: sdk.Schema(updateSchema), Hints: notDestructive, Handler: s.update},
		{Name: "memory_delete", Description: deleteDesc, Schema: sdk.Schema(deleteSchema), Handler: s.delete},
		{Name: "memory_forget", Description: forgetDesc, Schema: sdk.Schema(forgetSchema), Handler: s.forget},
		{Name: "memory_gc", Description: gcDesc, Schema: sdk.Schema(gcSchema), Hints: notDestructive, Handler: s.gc},
		{Name: "memory_promote", Description: promoteDesc, Schema: sdk.Schema(promoteSchema), Hints: notDestructive, Handler: s.promote},
	}
}

var (
	updateArgs = sdk.ArgNames(updateSchema)
	// agent_id: the reference's undocumented caller argument, accepted so
	// its clients keep working; the engine decides by the resolved caller.
	deleteArgs  = sdk.ArgNames(deleteSchema, "agent_id")
	forgetArgs  = sdk.ArgNames(forgetSchema)
	gcArgs      = sdk.ArgNames(gcSchema)
	promoteArgs = sdk.ArgNames(promoteSchema, "agent_id")
)

// maxListed bounds the memories a bulk answer lists (the engine's bound too).
const maxListed = 100

// memoryRef is one memory a bulk answer names.
type memoryRef struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Namespace string `json:"namespace"`
}

func refs(ms []*aimemoryv1.MemoryRef) []memoryRef {
	out := make([]memoryRef, 0, min(len(ms), maxListed))
	for _, m := range ms[:min(len(ms), maxListed)] {
		out = append(out, memoryRef{ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace()})
	}
	return out
}

// bulkResult is memory_forget's and memory_gc's answer: how many, which
// (the first maxListed; more says how many are not listed).
type bulkResult struct {
	Archived     *int        `json:"archived,omitempty"`
	WouldArchive *int        `json:"would_archive,omitempty"`
	DryRun       bool        `json:"dry_run,omitempty"`
	Memories     []memoryRef `json:"memories,omitempty"`
	More         int         `json:"more,omitempty"`
}

func newBulk(n int, ms []*aimemoryv1.MemoryRef, dryRun bool) bulkResult {
	r := bulkResult{DryRun: dryRun, Memories: refs(ms)}
	if dryRun {
		r.WouldArchive = &n
	} else {
		r.Archived = &n
	}
	r.More = n - len(r.Memories)
	return r
}

// provenanceArg checks the accepted-but-unused agent_id argument (claimed provenance, never authority).
func provenanceArg(a *sdk.Args) error {
	id, err := a.Str("agent_id", "")
	if err != nil || id == "" {
		return err
	}
	return record.ValidateAgentID("agent_id", id)
}

// resolve turns an id or unique prefix into the full id of a live memory;
// a miss is "memory not found".
func (s *service) resolve(ctx context.Context, id string) (string, error) {
	resp, err := s.eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}, AllowPrefix: true})
	if status.Code(err) == codes.NotFound || (err == nil && len(resp.GetMemories()) == 0) {
		return "", sdk.Errorf("memory not found: %s", record.Quote(id))
	}
	if err != nil {
		return "", sdk.EngineError(err)
	}
	return resp.GetMemories()[0].GetId(), nil
}

// requiredID reads and checks the id of the memory a tool changes.
func requiredID(a *sdk.Args) (string, error) { return a.TargetID("id") }

// updateResult is memory_update's answer: the fields an update can change
// (content is left out: the caller has it).
type updateResult struct {
	Updated    bool     `json:"updated"`
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Namespace  string   `json:"namespace"`
	Tier       string   `json:"tier"`
	Tags       []string `json:"tags,omitempty"`
	Priority   int32    `json:"priority"`
	Confidence float64  `json:"confidence"`
	ExpiresAt  string   `json:"expires_at,omitempty"`
	UpdatedAt  string   `json:"updated_at"`
}

// updateRequest validates every argument before anything is read.
func updateRequest(call sdk.Call) (*aimemoryv1.UpdateMemoryRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, updateArgs)
	if err != nil {
		return nil, err
	}
	id, err := requiredID(a)
	if err != nil {
		return nil, err
	}
	req := &aimemoryv1.UpdateMemoryRequest{Id: id}
	changes := 0
	has := func(name string) bool {
		_, ok := a.Value(name)
		if ok {
			changes++
		}
		return ok
	}
	if has("title") {
		t, err := a.Str("title", "")
		if err != nil {
			return nil, err
		}
		if err := record.ValidateTitle(t); err != nil {
			return nil, err
		}
		req.Title = proto.String(t)
	}
	if has("content") {
		c, err := a.Str("content", "")
		if err != nil {
			return nil, err
		}
		if err := record.ValidateContent(c); err != nil {
			return nil, err
		}
		req.Content = proto.String(c)
	}
	if has("tier") {
		t, err := a.Str("tier", "")
		if err != nil {
			return nil, err
		}
		if err := record.ValidateTier("tier", t); err != nil {
			return nil, err
		}
		req.Tier = proto.String(t)
	}
	if has("namespace") {
		ns, err := a.Namespace("namespace", "")
		if err != nil {
			return nil, err
		}
		req.Namespace = proto.String(ns)
	}
	if has("tags") {
		tags, err := a.StringList("tags")
		if err != nil {
			return nil, err
		}
		if err := record.ValidateTags("tags", tags); err != nil {
			return nil, err
		}
		req.SetTags, req.Tags = true, tags
	}
	if has("priority") {
		p, err := a.Integer("priority", 0, record.MinPriority, record.MaxPriority)
		if err != nil {
			return nil, err
		}
		req.Priority = proto.Int32(int32(p))
	}
	if has("confidence") {
		c, err := a.Number("confidence", 0)
		if err != nil {
			return nil, err
		}
		if err := record.ValidateConfidence(c); err != nil {
			return nil, err
		}
		req.Confidence = proto.Float64(c)
	}
	if has("expires_at") {
		e, err := a.Str("expires_at", "")
		if err != nil {
			return nil, err
		}
		if e == "" {
			req.ClearExpiresAt = true
		} else {
			at, err := record.ParseTime("expires_at", e)
			if err != nil {
				return nil, err
			}
			if at <= 0 {
				return nil, sdk.Errorf("expires_at: must be after 1970-01-01T00:00:00Z (got %s)", record.Quote(e))
			}
			req.ExpiresAt = proto.Int64(at)
		}
	}
	if has("metadata") {
		meta, err := updateMetadata(a)
		if err != nil {
			return nil, err
		}
		req.MetadataJson = meta
	}
	if changes == 0 {
		return nil, sdk.Errorf("nothing to update: give at least one of title, content, tier, namespace, tags, priority, confidence, expires_at, metadata")
	}
	return req, nil
}

// updateMetadata is the new metadata object; a scope in it must be a known
// one (an unknown scope would hide the memory from every as_agent query).
func updateMetadata(a *sdk.Args) ([]byte, error) {
	meta, err := a.Object("metadata")
	if err != nil {
		return nil, err
	}
	if sc, ok := meta["scope"]; ok {
		str, isStr := sc.(string)
		if !isStr {
			return nil, sdk.Errorf("metadata.scope: must be a string")
		}
		if err := record.ValidateScope(str); err != nil {
			return nil, err
		}
	}
	raw, err := sdk.MarshalCompact(meta)
	if err != nil {
		return nil, sdk.Errorf("metadata: %v", err)
	}
	return raw, record.ValidateMetadata(raw)
}

func (s *service) update(ctx context.Context, call sdk.Call) (any, error) {
	req, err := updateRequest(call)
	if err != nil {
		return nil, err
	}
	if req.Id, err = s.resolve(ctx, req.Id); err != nil {
		return nil, err
	}
	resp, err := s.eng.UpdateMemory(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	m := resp.GetMemory()
	return updateResult{
		Updated: true, ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace(), Tier: m.GetTier(),
		Tags: m.GetTags(), Priority: m.GetPriority(), Confidence: m.GetConfidence(),
		ExpiresAt: record.FormatTime(m.GetExpiresAt()), UpdatedAt: record.FormatTime(m.GetUpdatedAt()),
	}, nil
}

// deleteResult is memory_delete's answer.
type deleteResult struct {
	Deleted  bool   `json:"deleted"`
	ID       string `json:"id"`
	Archived bool   `json:"archived,omitempty"`
}

func deleteRequest(call sdk.Call) (*aimemoryv1.DeleteMemoriesRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, deleteArgs)
	if err != nil {
		return nil, err
	}
	id, err := requiredID(a)
	if err != nil {
		return nil, err
	}
	archive, err := a.Bool("archive", false)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.DeleteMemoriesRequest{Ids: []string{id}, Archive: archive}, provenanceArg(a)
}

func (s *service) delete(ctx context.Context, call sdk.Call) (any, error) {
	req, err := deleteRequest(call)
	if err != nil {
		return nil, err
	}
	id, archive := req.Ids[0], req.Archive
	if id, err = s.resolve(ctx, id); err != nil {
		return nil, err
	}
	req.Ids[0] = id
	resp, err := s.eng.DeleteMemories(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	if !slices.Contains(resp.GetDeleted(), id) {
		return nil, sdk.Errorf("memory not found: %s", record.Quote(id))
	}
	return deleteResult{Deleted: true, ID: id, Archived: archive}, nil
}

func forgetRequest(call sdk.Call) (*aimemoryv1.ForgetRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, forgetArgs)
	if err != nil {
		return nil, err
	}
	req := &aimemoryv1.ForgetRequest{}
	if req.Namespace, err = a.NamespaceFilter("namespace"); err != nil {
		return nil, err
	}
	if req.Pattern, err = a.Str("pattern", ""); err != nil {
		return nil, err
	}
	if err := record.ValidateQuery("pattern", req.Pattern); err != nil {
		return nil, err
	}
	if req.Tier, err = a.Str("tier", ""); err != nil {
		return nil, err
	}
	if req.Tier != "" {
		if err := record.ValidateTier("tier", req.Tier); err != nil {
			return nil, err
		}
	}
	if req.DryRun, err = a.Bool("dry_run", false); err != nil {
		return nil, err
	}
	if req.Namespace == "" && req.Pattern == "" && req.Tier == "" {
		return nil, sdk.Errorf("at least one of namespace, pattern or tier is required")
	}
	return req, nil
}

func (s *service) forget(ctx context.Context, call sdk.Call) (any, error) {
	req, err := forgetRequest(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.Forget(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return newBulk(int(resp.GetMatched()), resp.GetMemories(), req.DryRun), nil
}

func gcRequest(call sdk.Call) (*aimemoryv1.CollectGarbageRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, gcArgs)
	if err != nil {
		return nil, err
	}
	dry, err := a.Bool("dry_run", false)
	return &aimemoryv1.CollectGarbageRequest{Archive: true, DryRun: dry}, err
}

func (s *service) gc(ctx context.Context, call sdk.Call) (any, error) {
	req, err := gcRequest(call)
	if err != nil {
		return nil, err
	}
	dry := req.DryRun
	resp, err := s.eng.CollectGarbage(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	return newBulk(len(resp.GetCollected()), resp.GetMemories(), dry), nil
}

// promoteResult is memory_promote's answer in either mode.
type promoteResult struct {
	Promoted    bool   `json:"promoted"`
	Mode        string `json:"mode"`
	ID          string `json:"id,omitempty"`
	Tier        string `json:"tier,omitempty"`
	SourceID    string `json:"source_id,omitempty"`
	CloneID     string `json:"clone_id,omitempty"`
	ToNamespace string `json:"to_namespace,omitempty"`
	Merged      bool   `json:"merged,omitempty"`
}

func promoteRequest(call sdk.Call) (*aimemoryv1.PromoteMemoryRequest, error) {
	a, err := sdk.ParseArgs(call.Arguments, promoteArgs)
	if err != nil {
		return nil, err
	}
	id, err := requiredID(a)
	if err != nil {
		return nil, err
	}
	to := ""
	if _, ok := a.Value("to_namespace"); ok {
		if to, err = a.Namespace("to_namespace", ""); err != nil {
			return nil, err
		}
	}
	return &aimemoryv1.PromoteMemoryRequest{Id: id, ToNamespace: to}, provenanceArg(a)
}

func (s *service) promote(ctx context.Context, call sdk.Call) (any, error) {
	req, err := promoteRequest(call)
	if err != nil {
		return nil, err
	}
	id, to := req.Id, req.ToNamespace
	if id, err = s.resolve(ctx, id); err != nil {
		return nil, err
	}
	req.Id = id
	resp, err := s.eng.PromoteMemory(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	m := resp.GetMemory()
	if to == "" {
		return promoteResult{Promoted: true, Mode: "tier", ID: m.GetId(), Tier: m.GetTier()}, nil
	}
	return promoteResult{Promoted: true, Mode: "vertical", SourceID: id, CloneID: m.GetId(), ToNamespace: to, Merged: resp.GetMerged()}, nil
}
