package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// UpdateMemory patches the fields a request sets. A new title or namespace
// must be free (storage.ErrConflict). A tier change re-derives the expiry from the
// new tier's TTL (none for long); an explicit expires_at or
// clear_expires_at wins over that. metadata.agent_id cannot change once
// set. updated_at is bumped and updated_by stamped with the caller on every
// call.
func (s *Store) UpdateMemory(ctx context.Context, req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.UpdateMemoryResponse, error) {
	if err := validatePatch(req); err != nil {
		return nil, err
	}
	resp := &aimemoryv1.UpdateMemoryResponse{}
	err := s.write(ctx, func(w *writeTx) error {
		old, err := w.get(req.GetId())
		if err != nil {
			return err
		}
		if old == nil {
			return fmt.Errorf("%w: %s", storage.ErrNotFound, req.GetId())
		}
		m, err := patch(old, req, w.now, w.s.ttl)
		if err != nil {
			return err
		}
		if m.Namespace != old.Namespace || m.Title != old.Title {
			if owner := w.titleOwner(m.Namespace, m.Title); owner != "" && owner != m.Id {
				return &storage.ConflictError{Title: m.Title, Namespace: m.Namespace, ExistingID: owner}
			}
		}
		m.UpdatedBy = w.principal()
		// The policy sees both records, so a move is one question about
		// both namespaces.
		if err := w.authorize(storage.Write{Op: storage.OpUpdate, Old: old, New: m}); err != nil {
			return err
		}
		if err := w.moveEntity(old, m); err != nil {
			return err
		}
		resp.Memory = m
		return w.put(old, m, "memory_update")
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// validatePatch checks every field the request sets, before any I/O.
func validatePatch(req *aimemoryv1.UpdateMemoryRequest) error {
	var errs []error
	errs = append(errs, record.ValidateID("id", req.GetId()))
	if req.Title != nil {
		errs = append(errs, record.ValidateTitle(req.GetTitle()))
	}
	if req.Content != nil {
		errs = append(errs, record.ValidateContent(req.GetContent()))
	}
	if req.Tier != nil {
		errs = append(errs, record.ValidateTier("tier", req.GetTier()))
	}
	if req.Namespace != nil {
		errs = append(errs, record.ValidateNamespace("namespace", req.GetNamespace()))
	}
	if req.GetSetTags() {
		errs = append(errs, record.ValidateTags("tags", req.GetTags()))
	} else if len(req.GetTags()) > 0 {
		errs = append(errs, &record.FieldError{Field: "tags", Rule: "are only applied with set_tags"})
	}
	if req.Priority != nil {
		errs = append(errs, record.ValidatePriority(int64(req.GetPriority())))
	}
	if req.Confidence != nil {
		errs = append(errs, record.ValidateConfidence(req.GetConfidence()))
	}
	if req.MetadataJson != nil && len(bytes.TrimSpace(req.GetMetadataJson())) > 0 {
		errs = append(errs, validateMetadata(req.GetMetadataJson()))
	}
	if req.ExpiresAt != nil {
		switch {
		case req.GetClearExpiresAt():
			errs = append(errs, &record.FieldError{Field: "expires_at", Rule: "cannot be combined with clear_expires_at"})
		case req.GetExpiresAt() <= 0:
			errs = append(errs, &record.FieldError{Field: "expires_at", Rule: "must be a positive Unix time in nanoseconds (use clear_expires_at to remove the expiry)"})
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// patch returns old with the request's fields applied.
func patch(old *aimemoryv1.Memory, req *aimemoryv1.UpdateMemoryRequest, now int64, ttl storage.TTL) (*aimemoryv1.Memory, error) {
	m := cloneMemory(old)
	if req.Title != nil {
		m.Title = req.GetTitle()
	}
	if req.Content != nil {
		m.Content = req.GetContent()
	}
	if req.Namespace != nil {
		m.Namespace = req.GetNamespace()
	}
	if req.GetSetTags() {
		m.Tags = slices.Clip(slices.Clone(req.GetTags()))
	}
	if req.Priority != nil {
		m.Priority = req.GetPriority()
	}
	if req.Confidence != nil {
		m.Confidence = req.GetConfidence()
	}
	if req.MetadataJson != nil {
		raw := req.GetMetadataJson()
		if len(bytes.TrimSpace(raw)) == 0 {
			raw = []byte("{}")
		}
		meta, err := keepAgentID(old.MetadataJson, raw)
		if err != nil {
			return nil, err
		}
		m.MetadataJson = meta
	}
	if req.Tier != nil && req.GetTier() != old.Tier {
		m.Tier = req.GetTier()
		m.ExpiresAt = ttl.ExpiresAt(m.Tier, now)
	}
	switch {
	case req.ExpiresAt != nil:
		m.ExpiresAt = req.GetExpiresAt()
	case req.GetClearExpiresAt():
		m.ExpiresAt = 0
	}
	m.UpdatedAt = now
	return m, nil
}
