package rules

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ValidateConsolidate checks a consolidate request before any record is
// read: 2 to 100 distinct ids, the title, summary, namespace and agent id.
func ValidateConsolidate(req *aimemoryv1.ConsolidateRequest) error {
	ids := req.GetIds()
	if len(ids) < storage.MinConsolidate || len(ids) > storage.MaxConsolidate {
		return &record.FieldError{Field: "ids", Rule: fmt.Sprintf("must hold %d to %d ids (got %d)", storage.MinConsolidate, storage.MaxConsolidate, len(ids))}
	}
	if err := ValidateIDs("ids", ids); err != nil {
		return err
	}
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		if seen[id] {
			return &record.FieldError{Field: fmt.Sprintf("ids[%d]", i), Rule: "must not repeat an id (" + record.Quote(id) + ")"}
		}
		seen[id] = true
	}
	if err := record.ValidateTitle(req.GetTitle()); err != nil {
		return err
	}
	if err := record.ValidateContent(req.GetSummary()); err != nil {
		return &record.FieldError{Field: "summary", Rule: fieldRule(err)}
	}
	if err := record.ValidateNamespace("namespace", Or(req.GetNamespace(), record.DefaultNamespace)); err != nil {
		return err
	}
	if a := req.GetAgentId(); a != "" {
		return record.ValidateAgentID("agent_id", a)
	}
	return nil
}

// fieldRule is the rule of a field error (the content rules, reported
// under consolidate's own field name).
func fieldRule(err error) string {
	if fe, ok := err.(*record.FieldError); ok {
		return fe.Rule
	}
	return err.Error()
}

// Consolidated is the memory consolidate writes from srcs (in request
// order), before Create gives it an id and times: tier long, source
// consolidation, confidence 1, the union of the sources' tags (sorted),
// priority max(5, theirs), their access counts summed, and their metadata
// shallow-merged in order (later keys win, agent_id left out) with
// derived_from (the ids), agent_id (the consolidator) and
// consolidated_from_agents (the sources' distinct agent_ids, first seen
// first; left out when none).
func Consolidated(req *aimemoryv1.ConsolidateRequest, srcs []*aimemoryv1.Memory, agent string) (*aimemoryv1.Memory, error) {
	m := &aimemoryv1.Memory{
		Tier:       "long",
		Namespace:  Or(req.GetNamespace(), record.DefaultNamespace),
		Title:      req.GetTitle(),
		Content:    req.GetSummary(),
		Priority:   5,
		Confidence: 1,
		Source:     "consolidation",
	}
	meta := map[string]json.RawMessage{}
	var agents []string
	for _, s := range srcs {
		m.Tags = append(m.Tags, s.GetTags()...)
		m.Priority = max(m.Priority, s.GetPriority())
		m.AccessCount += s.GetAccessCount()
		var sm map[string]json.RawMessage
		if err := json.Unmarshal(s.GetMetadataJson(), &sm); err != nil && len(s.GetMetadataJson()) > 0 {
			return nil, fmt.Errorf("metadata of source %s: %w", s.GetId(), err)
		}
		for k, v := range sm {
			if k == "agent_id" {
				var a string
				if json.Unmarshal(v, &a) == nil && a != "" && !slices.Contains(agents, a) {
					agents = append(agents, a)
				}
				continue
			}
			meta[k] = v
		}
	}
	slices.Sort(m.Tags)
	m.Tags = slices.Compact(m.Tags)
	if len(m.Tags) > record.MaxTags {
		return nil, &record.FieldError{Field: "ids", Rule: fmt.Sprintf("the sources hold %d distinct tags; a memory holds at most %d", len(m.Tags), record.MaxTags)}
	}
	put := func(k string, v any) {
		raw, _ := json.Marshal(v)
		meta[k] = raw
	}
	put("derived_from", req.GetIds())
	if agent != "" {
		put("agent_id", agent)
	}
	if len(agents) > 0 {
		put("consolidated_from_agents", agents)
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	if err := ValidateMetadata(raw); err != nil {
		return nil, &record.FieldError{Field: "ids", Rule: "the sources' merged metadata: " + fieldRule(err)}
	}
	m.MetadataJson = raw
	return m, nil
}
