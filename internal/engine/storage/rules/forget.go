package rules

import (
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// MaxPatternTerms bounds a forget pattern's words; its length is a
// query's (record.ValidateQuery).
const MaxPatternTerms = 64

// Forget is a validated ForgetRequest: what a memory must match.
type Forget struct {
	Namespace, Tier string
	// Terms are the pattern's analysed words; a match holds every one.
	Terms []string
	// Readable is the caller's read rule (authz): nothing else is a
	// candidate, not even in a dry run's list.
	Readable func(ns string) bool
}

// NewForget validates req: at least one criterion; a valid namespace and
// tier when given (an unknown tier is an error, never "every tier"); a
// pattern with at least one word, analysed by query (search's analyser).
// Only memories readable allows are ever matched.
func NewForget(req *aimemoryv1.ForgetRequest, query func(string) []string, readable func(ns string) bool) (*Forget, error) {
	if err := ValidateForget(req); err != nil {
		return nil, err
	}
	f := &Forget{Namespace: req.GetNamespace(), Tier: req.GetTier(), Readable: readable}
	if pattern := req.GetPattern(); pattern != "" {
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

// ValidateForget is NewForget's checks that need no analyser, so a
// request can be refused before a transaction opens.
func ValidateForget(req *aimemoryv1.ForgetRequest) error {
	ns, tier, pattern := req.GetNamespace(), req.GetTier(), req.GetPattern()
	if ns == "" && tier == "" && pattern == "" {
		return &record.FieldError{Field: "namespace", Rule: "at least one of namespace, pattern or tier is required"}
	}
	if ns != "" {
		if err := record.ValidateNamespace("namespace", ns); err != nil {
			return err
		}
	}
	if tier != "" {
		if err := record.ValidateTier("tier", tier); err != nil {
			return err
		}
	}
	if pattern != "" {
		return record.ValidateQuery("pattern", pattern)
	}
	return nil
}

// Matches reports whether m meets the namespace and tier criteria (the
// pattern is the backend's to check against its term lists) and is
// readable. Without a namespace, guarded namespaces are never matched.
func (f *Forget) Matches(m *aimemoryv1.Memory) bool {
	switch {
	case !f.Readable(m.GetNamespace()):
		return false
	case f.Namespace != "" && m.GetNamespace() != f.Namespace:
		return false
	case f.Namespace == "" && authz.IsGuarded(m.GetNamespace()):
		return false
	case f.Tier != "" && m.GetTier() != f.Tier:
		return false
	}
	return true
}
