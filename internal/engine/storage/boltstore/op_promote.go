package boltstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// PromoteMemory: tier mode (no to_namespace) makes the memory long with no
// expiry; vertical mode writes a copy into a proper ancestor of its
// namespace, merging into a memory already holding the title there by the
// one merge rule, and links copy → source derived_from. Asked as
// OpPromote about the source, and in vertical mode again about the copy,
// so the ancestor's policy and guard decide as well.
func (s *Store) PromoteMemory(ctx context.Context, req *aimemoryv1.PromoteMemoryRequest) (*aimemoryv1.PromoteMemoryResponse, error) {
	if err := record.ValidateID("id", req.GetId()); err != nil {
		return nil, err
	}
	if to := req.GetToNamespace(); to != "" {
		if err := record.ValidateNamespace("to_namespace", to); err != nil {
			return nil, err
		}
	}
	var resp *aimemoryv1.PromoteMemoryResponse
	payload := &aimemoryv1.PendingPayload{Action: &aimemoryv1.PendingPayload_Promote{Promote: req}}
	err := s.writeGoverned(ctx, payload, func(w *writeTx) error {
		var err error
		resp, err = w.promote(req.GetId(), req.GetToNamespace())
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// promote is PromoteMemory's transaction step, for any caller holding a
// write transaction (an approval, later).
func (w *writeTx) promote(id, to string) (*aimemoryv1.PromoteMemoryResponse, error) {
	src, err := w.get(id)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, fmt.Errorf("%w: %s", storage.ErrNotFound, id)
	}
	if to == "" {
		m := rules.Clone(src)
		m.Tier, m.ExpiresAt = "long", 0
		m.UpdatedAt, m.UpdatedBy = w.now, w.principal()
		if err := w.authorize(storage.Write{Op: storage.OpPromote, Old: src, New: m}); err != nil {
			return nil, err
		}
		return &aimemoryv1.PromoteMemoryResponse{Memory: m}, w.put(src, m, "memory_promote")
	}

	ancestors := record.Ancestors(src.Namespace)[1:]
	switch {
	case to == src.Namespace:
		return nil, &record.FieldError{Field: "to_namespace", Rule: fmt.Sprintf("must be a proper ancestor of %s, not the namespace itself", record.Quote(src.Namespace))}
	case !slices.Contains(ancestors, to):
		rule := fmt.Sprintf("%s is not an ancestor of %s", record.Quote(to), record.Quote(src.Namespace))
		if len(ancestors) > 0 {
			rule += " (its ancestors: " + strings.Join(ancestors, ", ") + ")"
		} else {
			rule += " (it has none)"
		}
		return nil, &record.FieldError{Field: "to_namespace", Rule: rule}
	}
	if err := w.authorize(storage.Write{Op: storage.OpPromote, Old: src, New: src}); err != nil {
		return nil, err
	}

	copy := rules.Clone(src)
	copy.Namespace, copy.AccessCount, copy.LastAccessedAt = to, 0, 0
	resp := &aimemoryv1.PromoteMemoryResponse{}
	if holder := w.titleOwner(to, src.Title); holder != "" {
		old, err := w.get(holder)
		if err != nil {
			return nil, err
		}
		if old == nil {
			return nil, fmt.Errorf("title index names missing memory %s", holder)
		}
		merged, err := rules.Merge(old, copy, w.now, w.s.ttl, w.principal())
		if err != nil {
			return nil, err
		}
		if err := w.authorize(storage.Write{Op: storage.OpPromote, Old: src, New: merged}); err != nil {
			return nil, err
		}
		if err := w.archive(old, storage.ArchiveReasonSuperseded, ""); err != nil {
			return nil, err
		}
		if err := w.put(old, merged, "memory_promote"); err != nil {
			return nil, err
		}
		resp.Memory, resp.Merged = merged, true
	} else {
		rules.Create(copy, w.now, w.s.ttl, w.principal())
		if err := w.authorize(storage.Write{Op: storage.OpPromote, Old: src, New: copy}); err != nil {
			return nil, err
		}
		if err := w.put(nil, copy, "memory_promote"); err != nil {
			return nil, err
		}
		resp.Memory = copy
	}
	return resp, w.linkDerived(resp.Memory.Id, src.Id)
}

// linkDerived makes sure the link copy → source derived_from is valid now.
func (w *writeTx) linkDerived(copyID, srcID string) error {
	l, err := readLink(w.tx, copyID, srcID, "derived_from")
	if err != nil {
		return err
	}
	switch {
	case l == nil:
		l = &aimemoryv1.Link{SourceId: copyID, TargetId: srcID, Relation: "derived_from",
			CreatedAt: w.now, ValidFrom: w.now, ObservedBy: w.principal()}
	case l.ValidUntil == 0 && l.ValidFrom != 0:
		return nil
	default:
		rules.CloseInterval(l)
		l.ValidFrom, l.ValidUntil, l.ObservedBy, l.InvalidatedBy, l.InvalidatedAt = w.now, 0, w.principal(), "", 0
	}
	return putLink(w.tx, l)
}
