package boltstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// validateIDs checks each id, naming the failing one field[i].
func validateIDs(field string, ids []string) error {
	for i, id := range ids {
		if err := record.ValidateID(fmt.Sprintf("%s[%d]", field, i), id); err != nil {
			return err
		}
	}
	return nil
}

// newMemory checks a memory to store and fills the defaults of
// data-model §2. The caller's id, counters and timestamps are ignored: the
// engine assigns them.
func newMemory(in *aimemoryv1.Memory) (*aimemoryv1.Memory, error) {
	if in == nil {
		return nil, &record.FieldError{Field: "memory", Rule: "is required"}
	}
	m := &aimemoryv1.Memory{
		Tier:         cmpOr(in.GetTier(), record.DefaultTier),
		Namespace:    cmpOr(in.GetNamespace(), record.DefaultNamespace),
		Title:        in.GetTitle(),
		Content:      in.GetContent(),
		Tags:         slices.Clip(slices.Clone(in.GetTags())),
		Priority:     in.GetPriority(),
		Confidence:   in.GetConfidence(),
		Source:       cmpOr(in.GetSource(), record.DefaultSource),
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
		validateMetadata(m.MetadataJson),
	} {
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// validateMetadata applies record.ValidateMetadata and the rules of the
// reserved keys the engine reads: agent_id (an agent id) and scope.
func validateMetadata(raw []byte) error {
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

// keepAgentID returns next with prev's metadata.agent_id carried over when
// prev has one: provenance is immutable (data-model §6).
func keepAgentID(prev, next []byte) ([]byte, error) {
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
