package rules

import (
	"bytes"
	"encoding/json"
	"fmt"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Entity defaults of family-graph §1.5.
const (
	entityTag      = "entity"
	entityKind     = "entity"
	entityPriority = 7
	entitySource   = "api"
)

// FoldAlias is the lookup form of an alias: Unicode case folding (ß and ss
// match, as do K and the Kelvin sign) of its NFC form.
func FoldAlias(s string) string {
	return norm.NFC.String(cases.Fold().String(norm.NFC.String(s)))
}

// EntityMemory builds and checks the memory of a new entity.
func EntityMemory(name, namespace string, metadata []byte) (*aimemoryv1.Memory, error) {
	meta := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(metadata)) > 0 {
		if err := record.ValidateMetadata(metadata); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(metadata, &meta); err != nil {
			return nil, &record.FieldError{Field: "metadata", Rule: "must be a JSON object"}
		}
	}
	meta["kind"] = json.RawMessage(`"` + entityKind + `"`)
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return New(&aimemoryv1.Memory{
		Tier: "long", Namespace: namespace, Title: name, Content: name,
		Tags: []string{entityTag}, Priority: entityPriority, Confidence: 1,
		Source: entitySource, MetadataJson: raw,
	})
}
