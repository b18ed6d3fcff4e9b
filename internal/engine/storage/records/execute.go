package records

import (
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// approving is a transaction an approval runs in (ops.GovTx): an approved
// action's payload executes in it, as its requester, through the same
// steps its request would have run.
type approving struct{ seam.Tx }

// ExecuteAs runs p's payload as its requester (storage.AsRequester), with
// its approval; the result is the memory it wrote or removed.
func (t approving) ExecuteAs(p *aimemoryv1.PendingAction) (string, error) {
	var result string
	err := t.As(storage.AsRequester(t.Context(), p), func() error {
		var err error
		result, err = ops.Execute(executor{t.Tx}, p)
		return err
	})
	return result, err
}

// executor is ops.Executor over a transaction: each queued kind of write
// runs its step of package ops.
type executor struct{ t seam.Tx }

func (x executor) StoreMemory(in *aimemoryv1.Memory, policy aimemoryv1.ConflictPolicy, resp *aimemoryv1.StoreMemoryResponse) error {
	return ops.Store(x.t, in, policy, resp)
}
func (x executor) UpdateMemory(req *aimemoryv1.UpdateMemoryRequest, resp *aimemoryv1.UpdateMemoryResponse) error {
	return ops.Update(x.t, req, resp)
}
func (x executor) DeleteMemories(ids []string, archive bool, resp *aimemoryv1.DeleteMemoriesResponse) error {
	return ops.Delete(x.t, ids, archive, resp)
}
func (x executor) PutLink(req *aimemoryv1.PutLinkRequest, rel, observedBy string, resp *aimemoryv1.PutLinkResponse) error {
	return ops.PutLink(x.t, req, rel, observedBy, resp)
}
func (x executor) InvalidateLink(req *aimemoryv1.InvalidateLinkRequest, by string, resp *aimemoryv1.InvalidateLinkResponse) error {
	return ops.InvalidateLink(x.t, req, by, resp)
}
func (x executor) ApprovedForget(p *aimemoryv1.PendingForget) ([]string, error) {
	return ops.ApprovedForget(x.t, p, x.t.ForgetMatches)
}
func (x executor) Promote(id, to string) (*aimemoryv1.PromoteMemoryResponse, error) {
	return ops.Promote(x.t, id, to)
}
func (x executor) Consolidate(req *aimemoryv1.ConsolidateRequest) (*aimemoryv1.ConsolidateResponse, error) {
	return ops.Consolidate(x.t, req)
}
func (x executor) Restore(req *aimemoryv1.RestoreMemoryRequest) (*aimemoryv1.RestoreMemoryResponse, error) {
	return ops.Restore(x.t.Context(), x.t, req)
}
