package records

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// PutLink creates the link, or revives an invalidated one (see
// PutLinkOutcome); a link valid with no end is left as it is. Both
// memories must exist (expired-but-uncollected ones do).
func (s *Store) PutLink(ctx context.Context, req *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	rel, by, err := ops.ValidatePutLink(ctx, req)
	if err != nil {
		return nil, err
	}
	// A link valid with no end needs no write (nor the commit of an empty
	// transaction): answer from a read. A live link's ends are live.
	var current *aimemoryv1.Link
	unchanged := false
	err = s.b.Read(ctx, func(t seam.Tx) error {
		var err error
		if current, err = t.ReadLink(req.GetSourceId(), req.GetTargetId(), rel); err != nil || current == nil {
			return err
		}
		src, err := t.Get(current.SourceId)
		if err != nil {
			return err
		}
		dst, err := t.Get(current.TargetId)
		if err != nil {
			return err
		}
		unchanged = src != nil && dst != nil && ops.Unchanged(ctx, current, src.GetNamespace(), dst.GetNamespace())
		return nil
	})
	if err != nil {
		return nil, err
	}
	if unchanged {
		return &aimemoryv1.PutLinkResponse{Link: current, Outcome: aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED}, nil
	}
	return governed(ctx, s, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Link{Link: req}}, func(t seam.Tx) (*aimemoryv1.PutLinkResponse, error) {
		resp := &aimemoryv1.PutLinkResponse{}
		return resp, ops.PutLink(t, req, rel, by, resp)
	})
}

// InvalidateLink sets the end of the link's current interval (now when
// valid_until is absent; past and future are both allowed) and records who
// did it and when. Calling it again moves the end. found is false when
// both memories exist but the link does not (ops.InvalidateLink).
func (s *Store) InvalidateLink(ctx context.Context, req *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	by, err := ops.ValidateInvalidateLink(ctx, req)
	if err != nil {
		return nil, err
	}
	return governed(ctx, s, &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Unlink{Unlink: req}}, func(t seam.Tx) (*aimemoryv1.InvalidateLinkResponse, error) {
		resp := &aimemoryv1.InvalidateLinkResponse{}
		return resp, ops.InvalidateLink(t, req, by, resp)
	})
}

// RegisterEntity creates the entity (canonical_name, namespace), or reuses
// it when it exists (its metadata left as it is), and adds the aliases it
// lacks; all in one transaction, so an alias held by another entity of the
// namespace (storage.AliasTakenError) writes nothing. A memory with the
// same title that is not an entity blocks registration (ops.RegisterEntity).
func (s *Store) RegisterEntity(ctx context.Context, req *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	in, err := ops.ValidateRegisterEntity(ctx, req)
	if err != nil {
		return nil, err
	}
	return written(ctx, s, func(t seam.Tx) (*aimemoryv1.RegisterEntityResponse, error) {
		resp := &aimemoryv1.RegisterEntityResponse{}
		return resp, ops.RegisterEntity(t, in, resp)
	})
}

// GetEntityByAlias resolves an alias (case-folded) in a namespace, or in
// every namespace, where the most recently created entity the caller may
// read wins (t.Get answers only those). No entity is an empty response,
// not an error.
func (s *Store) GetEntityByAlias(ctx context.Context, req *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error) {
	f, ns, err := ops.ValidateEntityLookup(req)
	if err != nil {
		return nil, err
	}
	return read(ctx, s, func(t seam.Tx) (*aimemoryv1.GetEntityByAliasResponse, error) {
		var ids []string
		if ns != "" {
			id, err := t.AliasHolder(f, ns)
			if err != nil {
				return nil, err
			}
			if id != "" {
				ids = append(ids, id)
			}
		} else if ids, err = t.AliasHolders(f); err != nil {
			return nil, err
		}
		var best *aimemoryv1.Memory
		for _, id := range ids {
			m, err := t.Get(id)
			if err != nil {
				return nil, err
			}
			if m != nil && ops.Newer(m, best) {
				best = m
			}
		}
		resp := &aimemoryv1.GetEntityByAliasResponse{}
		if best == nil {
			return resp, nil
		}
		_, aliases, err := t.Aliases(best.Id)
		resp.Entity = ops.EntityOf(best, aliases)
		return resp, err
	})
}
