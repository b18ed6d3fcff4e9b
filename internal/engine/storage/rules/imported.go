package rules

import (
	"fmt"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ValidImported checks a stored record's fields with the record rules (import takes
// records as another store kept them, so every field is checked).
func ValidImported(m *aimemoryv1.Memory) error {
	checks := []error{
		record.ValidateID("id", m.GetId()),
		record.ValidateTitle(m.GetTitle()),
		record.ValidateContent(m.GetContent()),
		record.ValidateNamespace("namespace", m.GetNamespace()),
		record.ValidateTier("tier", m.GetTier()),
		record.ValidateTags("tags", m.GetTags()),
		record.ValidatePriority(int64(m.GetPriority())),
		record.ValidateConfidence(m.GetConfidence()),
	}
	if len(m.GetMetadataJson()) > 0 {
		checks = append(checks, record.ValidateMetadata(m.GetMetadataJson()))
	}
	for _, a := range []struct{ f, v string }{{"created_by", m.GetCreatedBy()}, {"updated_by", m.GetUpdatedBy()}} {
		if a.v != "" {
			checks = append(checks, record.ValidateAgentID(a.f, a.v))
		}
	}
	if m.GetCreatedAt() <= 0 || m.GetUpdatedAt() < m.GetCreatedAt() {
		checks = append(checks, fmt.Errorf("created_at and updated_at: must be set, updated_at not before created_at"))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}
