// Package rules holds the record rules every storage backend applies the
// same way, so backends differ only in how they store: a new memory's
// defaults and checks, the one merge rule, update patches, a recall's
// touch, link validity intervals and filters, entity aliases. (The field
// limits shared with plugins are in sdk/record.)
package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ValidateIDs checks each id, naming the failing one field[i].
func ValidateIDs(field string, ids []string) error {
	for i, id := range ids {
		if err := record.ValidateID(fmt.Sprintf("%s[%d]", field, i), id); err != nil {
			return err
		}
	}
	return nil
}

// NewStore checks a StoreMemory request: its memory (New) and its
// conflict policy.
func NewStore(req *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.Memory, aimemoryv1.ConflictPolicy, error) {
	in, err := New(req.GetMemory())
	if err != nil {
		return nil, 0, err
	}
	switch p := req.GetOnConflict(); p {
	case aimemoryv1.ConflictPolicy_CONFLICT_POLICY_UNSPECIFIED, aimemoryv1.ConflictPolicy_CONFLICT_POLICY_MERGE,
		aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR, aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION:
		return in, p, nil
	default:
		return nil, 0, &record.FieldError{Field: "on_conflict", Rule: fmt.Sprintf("must be ERROR, MERGE or VERSION (got %d)", p)}
	}
}

// New checks a memory to store and fills the defaults of
// data-model §2. The caller's id, counters and timestamps are ignored: the
// engine assigns them.
func New(in *aimemoryv1.Memory) (*aimemoryv1.Memory, error) {
	if in == nil {
		return nil, &record.FieldError{Field: "memory", Rule: "is required"}
	}
	m := &aimemoryv1.Memory{
		Tier:         Or(in.GetTier(), record.DefaultTier),
		Namespace:    Or(in.GetNamespace(), record.DefaultNamespace),
		Title:        in.GetTitle(),
		Content:      in.GetContent(),
		Tags:         slices.Clip(slices.Clone(in.GetTags())),
		Priority:     in.GetPriority(),
		Confidence:   in.GetConfidence(),
		Source:       Or(in.GetSource(), record.DefaultSource),
		MetadataJson: in.GetMetadataJson(),
	}
	if m.Priority == 0 {
		m.Priority = record.DefaultPriority
	}
	if len(bytes.TrimSpace(m.MetadataJson)) == 0 {
		m.MetadataJson = []byte("{}")
	}
	for _, err := range []error{
		record.ValidateTitle(m.Title),
		record.ValidateContent(m.Content),
		record.ValidateNamespace("namespace", m.Namespace),
		record.ValidateTags("tags", m.Tags),
		record.ValidatePriority(int64(m.Priority)),
		record.ValidateConfidence(m.Confidence),
		record.ValidateSource(m.Source),
		record.ValidateTier("tier", m.Tier),
		ValidateMetadata(m.MetadataJson),
	} {
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func Or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ValidateMetadata applies record.ValidateMetadata and the rules of the
// reserved keys the engine reads: agent_id (an agent id) and scope.
func ValidateMetadata(raw []byte) error {
	if err := record.ValidateMetadata(raw); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return &record.FieldError{Field: "metadata", Rule: "must be a JSON object"}
	}
	if v, ok := m["agent_id"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return &record.FieldError{Field: "metadata.agent_id", Rule: "must be a string"}
		}
		if err := record.ValidateAgentID("metadata.agent_id", s); err != nil {
			return err
		}
	}
	if v, ok := m["scope"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return &record.FieldError{Field: "metadata.scope", Rule: "must be a string"}
		}
		if err := record.ValidateScope(s); err != nil {
			return err
		}
	}
	return nil
}

// KeepAgentID returns next with prev's metadata.agent_id carried over when
// prev has one: provenance is immutable (data-model §6).
func KeepAgentID(prev, next []byte) ([]byte, error) {
	var p map[string]json.RawMessage
	if json.Unmarshal(prev, &p) != nil || p["agent_id"] == nil {
		return next, nil
	}
	var n map[string]json.RawMessage
	if err := json.Unmarshal(next, &n); err != nil {
		return nil, &record.FieldError{Field: "metadata", Rule: "must be a JSON object"}
	}
	if bytes.Equal(n["agent_id"], p["agent_id"]) {
		return next, nil
	}
	if n == nil {
		n = map[string]json.RawMessage{}
	}
	n["agent_id"] = p["agent_id"]
	out, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	if err := record.ValidateMetadata(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Create assigns what the engine owns of a new memory: its id, times,
// expiry for its tier, and both authors (by, the caller).
func Create(m *aimemoryv1.Memory, now int64, ttl storage.TTL, by string) {
	m.Id = uuid.NewString()
	m.CreatedAt, m.UpdatedAt = now, now
	m.ExpiresAt = ttl.ExpiresAt(m.Tier, now)
	m.CreatedBy, m.UpdatedBy = by, by
}

// Merge is the one merge rule for a duplicate (title, namespace), used
// on every path: content and tags replaced; priority and confidence take
// the new values; the tier never goes down; the source stays; metadata is
// replaced but keeps the old agent_id; created_by stays (the caller
// stamps updated_by); updated_at and the expiry (from the resulting tier's
// TTL) are refreshed.
func Merge(old, next *aimemoryv1.Memory, now int64, ttl storage.TTL, by string) (*aimemoryv1.Memory, error) {
	m := Clone(old)
	m.Content = next.Content
	m.Tags = next.Tags
	m.Priority = next.Priority
	m.Confidence = next.Confidence
	if record.TierRank(next.Tier) > record.TierRank(m.Tier) {
		m.Tier = next.Tier
	}
	meta, err := KeepAgentID(old.MetadataJson, next.MetadataJson)
	if err != nil {
		return nil, err
	}
	m.MetadataJson = meta
	m.UpdatedAt, m.UpdatedBy = now, by
	m.ExpiresAt = ttl.ExpiresAt(m.Tier, now)
	return m, nil
}

func Dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// ValidatePatch checks every field the request sets, before any I/O.
func ValidatePatch(req *aimemoryv1.UpdateMemoryRequest) error {
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
		errs = append(errs, ValidateMetadata(req.GetMetadataJson()))
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

// Patch returns old with the request's fields applied, written by the
// caller by (updated_by).
func Patch(old *aimemoryv1.Memory, req *aimemoryv1.UpdateMemoryRequest, now int64, ttl storage.TTL, by string) (*aimemoryv1.Memory, error) {
	m := Clone(old)
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
		meta, err := KeepAgentID(old.MetadataJson, raw)
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
	m.UpdatedAt, m.UpdatedBy = now, by
	return m, nil
}

func Clone(m *aimemoryv1.Memory) *aimemoryv1.Memory {
	return proto.Clone(m).(*aimemoryv1.Memory)
}

// Touch rules of data-model §4.3, as issue 8 left them.
const (
	MaxAccessCount = 1_000_000
	PromoteAt      = 5 // mid → long at this many accesses
)

// Touch is a recall's effect on one memory it returned: access_count+1 and
// last_accessed_at; a short or mid expiry pushed out to at least
// now+extend (a read never shortens it); a mid memory reaching 5 accesses
// becomes long with no expiry. None of it raises rank: ranking reads
// neither access count nor tier (index/rank.go), and the promotion leaves
// updated_at alone (a read is not an edit, and updated_at feeds recency).
// The reference's priority bump (+1 every 10th access) is gone: priority
// only ever mattered for order, so the bump was the feedback loop itself.
func Touch(old *aimemoryv1.Memory, now int64, ttl storage.TTL) *aimemoryv1.Memory {
	m := Clone(old)
	m.AccessCount = min(m.AccessCount+1, MaxAccessCount)
	m.LastAccessedAt = now
	if m.ExpiresAt != 0 {
		var extend int64
		switch m.Tier {
		case "short":
			extend = int64(ttl.ShortExtend)
		case "mid":
			extend = int64(ttl.MidExtend)
		}
		if extend > 0 {
			m.ExpiresAt = max(m.ExpiresAt, now+extend)
		}
	}
	if m.Tier == "mid" && m.AccessCount >= PromoteAt {
		m.Tier = "long"
		m.ExpiresAt = 0
	}
	return m
}
