package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Executor is what a backend's write transaction runs an approved pending
// action with: its own steps for each kind of queued write.
type Executor interface {
	StoreMemory(in *aimemoryv1.Memory, policy aimemoryv1.ConflictPolicy, resp *aimemoryv1.StoreMemoryResponse) error
	UpdateMemory(req *aimemoryv1.UpdateMemoryRequest, resp *aimemoryv1.UpdateMemoryResponse) error
	DeleteMemories(ids []string, archive bool, resp *aimemoryv1.DeleteMemoriesResponse) error
	PutLink(req *aimemoryv1.PutLinkRequest, rel, observedBy string, resp *aimemoryv1.PutLinkResponse) error
	InvalidateLink(req *aimemoryv1.InvalidateLinkRequest, by string, resp *aimemoryv1.InvalidateLinkResponse) error
	ApprovedForget(p *aimemoryv1.PendingForget) ([]string, error)
	Promote(id, to string) (*aimemoryv1.PromoteMemoryResponse, error)
	Consolidate(req *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error)
	Restore(req *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error)
}

// Execute runs an approved action's payload in x's transaction, checked
// as it was when it was requested; a link or unlink records its requester
// (requested_by, which the engine set when it queued it). The result is
// the memory it wrote or removed (several, comma-separated).
func Execute(x Executor, pa *aimemoryv1.PendingAction) (string, error) {
	p := pa.GetPayload()
	switch a := p.GetAction().(type) {
	case *aimemoryv1.PendingPayload_Store:
		in, err := rules.New(a.Store.GetMemory())
		if err != nil {
			return "", err
		}
		resp := &aimemoryv1.StoreMemoryResponse{}
		if err := x.StoreMemory(in, a.Store.GetOnConflict(), resp); err != nil {
			return "", err
		}
		return resp.GetMemory().GetId(), nil
	case *aimemoryv1.PendingPayload_Update:
		if err := rules.ValidatePatch(a.Update); err != nil {
			return "", err
		}
		return a.Update.GetId(), x.UpdateMemory(a.Update, &aimemoryv1.UpdateMemoryResponse{})
	case *aimemoryv1.PendingPayload_Delete:
		if err := rules.ValidateIDs("ids", a.Delete.GetIds()); err != nil {
			return "", err
		}
		resp := &aimemoryv1.DeleteMemoriesResponse{}
		if err := x.DeleteMemories(rules.Dedupe(slices.Clone(a.Delete.GetIds())), a.Delete.GetArchive(), resp); err != nil {
			return "", err
		}
		if len(resp.Deleted) == 0 {
			return "", fmt.Errorf("%w: %s", storage.ErrNotFound, strings.Join(a.Delete.GetIds(), ", "))
		}
		return strings.Join(resp.Deleted, ","), nil
	case *aimemoryv1.PendingPayload_Link:
		rel := rules.Or(a.Link.GetRelation(), record.DefaultRelation)
		if err := record.ValidateLink(a.Link.GetSourceId(), a.Link.GetTargetId(), rel); err != nil {
			return "", err
		}
		return a.Link.GetSourceId(), x.PutLink(a.Link, rel, pa.GetRequestedBy(), &aimemoryv1.PutLinkResponse{})
	case *aimemoryv1.PendingPayload_Unlink:
		if err := record.ValidateLink(a.Unlink.GetSourceId(), a.Unlink.GetTargetId(), a.Unlink.GetRelation()); err != nil {
			return "", err
		}
		return a.Unlink.GetSourceId(), x.InvalidateLink(a.Unlink, pa.GetRequestedBy(), &aimemoryv1.InvalidateLinkResponse{})
	case *aimemoryv1.PendingPayload_Forget:
		ids, err := x.ApprovedForget(a.Forget)
		return strings.Join(ids, ","), err
	case *aimemoryv1.PendingPayload_Promote:
		resp, err := x.Promote(a.Promote.GetId(), a.Promote.GetToNamespace())
		return resp.GetMemory().GetId(), err
	case *aimemoryv1.PendingPayload_Consolidate:
		resp, err := x.Consolidate(a.Consolidate)
		return resp.GetMemory().GetId(), err
	case *aimemoryv1.PendingPayload_Restore:
		resp, err := x.Restore(a.Restore)
		return resp.GetMemory().GetId(), err
	}
	return "", fmt.Errorf("pending action has no payload this engine can execute")
}
