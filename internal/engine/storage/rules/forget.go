package rules

import (
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// MaxPatternTerms bounds a forget pattern's words; its length is a
// query's (record.ValidateQuery).
const MaxPatternTerms = 64

// Forget is a validated ForgetRequest: what a memory must match.
type Forget struct {
	Namespace, Tier string
	// Terms are the pattern's analysed words; a match holds every one.
	Terms []string
}

// NewForget validates req: at least one criterion; a valid namespace and
// tier when given (an unknown tier is an error, never "every tier"); a
// pattern with at least one word, analysed by query (search's analyser).
func NewForget(req *aimemoryv1.ForgetRequest, query func(string) []string) (*Forget, error) {
	f := &Forget{Namespace: req.GetNamespace(), Tier: req.GetTier()}
	pattern := req.GetPattern()
	if f.Namespace == "" && f.Tier == "" && pattern == "" {
		return nil, &record.FieldError{Field: "namespace", Rule: "at least one of namespace, pattern or tier is required"}
	}
	if f.Namespace != "" {
		if err := record.ValidateNamespace("namespace", f.Namespace); err != nil {
			return nil, err
		}
	}
	if f.Tier != "" {
		if err := record.ValidateTier("tier", f.Tier); err != nil {
			return nil, err
		}
	}
	if pattern != "" {
		if err := record.ValidateQuery("pattern", pattern); err != nil {
			return nil, err
		}
		f.Terms = query(pattern)
		switch {
		case len(f.Terms) == 0:
			return nil, &record.FieldError{Field: "pattern", Rule: fmt.Sprintf("has no word to match (got %s)", record.Quote(pattern))}
		case len(f.Terms) > MaxPatternTerms:
			return nil, &record.FieldError{Field: "pattern", Rule: fmt.Sprintf("must have at most %d distinct words (got %d)", MaxPatternTerms, len(f.Terms))}
		}
	}
	return f, nil
}

// Matches reports whether m meets the namespace and tier criteria (the
// pattern is the backend's to check against its term lists). Without a
// namespace, guarded namespaces are never matched.
func (f *Forget) Matches(m *aimemoryv1.Memory) bool {
	switch {
	case f.Namespace != "" && m.GetNamespace() != f.Namespace:
		return false
	case f.Namespace == "" && storage.IsGuarded(m.GetNamespace()):
		return false
	case f.Tier != "" && m.GetTier() != f.Tier:
		return false
	}
	return true
}
