package record

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Relations are the closed set of link types (family-graph §1.3); adding
// one is a format change.
var Relations = []string{"related_to", "supersedes", "contradicts", "derived_from"}

// DefaultRelation is what memory_link uses when none is given.
const DefaultRelation = "related_to"

// Limits of the graph family.
const (
	MaxAliasChars   = MaxTitleChars
	MaxAliasesPerOp = 100
)

// ValidateRelation: one of Relations (case-sensitive).
func ValidateRelation(field, rel string) error {
	if !slices.Contains(Relations, rel) {
		return fieldErr(field, "must be one of %s (got %s)", strings.Join(Relations, ", "), Quote(rel))
	}
	return nil
}

// ValidateLink: both ids valid, the relation known, and no self-link.
func ValidateLink(source, target, relation string) error {
	if err := ValidateID("source_id", source); err != nil {
		return err
	}
	if err := ValidateID("target_id", target); err != nil {
		return err
	}
	if err := ValidateRelation("relation", relation); err != nil {
		return err
	}
	if source == target {
		return fieldErr("target_id", "must differ from source_id (no self-links)")
	}
	return nil
}

// ValidateAlias: an entity name or alias (writers trim it first):
// non-empty, at most 512 characters, no control characters.
func ValidateAlias(field, s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fieldErr(field, "must not be empty")
	case !utf8.ValidString(s):
		return fieldErr(field, "must be valid UTF-8")
	case utf8.RuneCountInString(s) > MaxAliasChars:
		return fieldErr(field, "must be at most %d characters (got %d)", MaxAliasChars, utf8.RuneCountInString(s))
	case hasBadControl(s) || strings.ContainsAny(s, "\n\t"):
		return fieldErr(field, "must not contain control characters")
	}
	return nil
}
