package graphfamily

import (
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// linkRow is a link as every graph result shows it, seen from a memory
// the caller named: id is the memory at the other end. Empty fields are
// left out; created_at only when it differs from valid_from (a revived
// link).
type linkRow struct {
	ID            string   `json:"id"`
	Depth         int      `json:"depth,omitempty"`
	Relation      string   `json:"relation"`
	Dir           string   `json:"dir,omitempty"`
	Title         string   `json:"title,omitempty"`
	Namespace     string   `json:"namespace,omitempty"`
	Via           []string `json:"via,omitempty"`
	ValidFrom     string   `json:"valid_from,omitempty"`
	ValidUntil    string   `json:"valid_until,omitempty"`
	ObservedBy    string   `json:"observed_by,omitempty"`
	InvalidatedBy string   `json:"invalidated_by,omitempty"`
	InvalidatedAt string   `json:"invalidated_at,omitempty"`
	CreatedAt     string   `json:"created_at,omitempty"`
}

// newRow shows l from the end that is not other, with other's title and
// namespace.
func newRow(l *aimemoryv1.Link, other, title, namespace string) linkRow {
	r := linkRow{
		ID:            other,
		Relation:      l.GetRelation(),
		Title:         title,
		Namespace:     namespace,
		ValidFrom:     record.FormatTime(l.GetValidFrom()),
		ValidUntil:    record.FormatTime(l.GetValidUntil()),
		ObservedBy:    l.GetObservedBy(),
		InvalidatedBy: l.GetInvalidatedBy(),
	}
	if l.GetCreatedAt() != l.GetValidFrom() {
		r.CreatedAt = record.FormatTime(l.GetCreatedAt())
	}
	if l.GetInvalidatedAt() != l.GetValidUntil() {
		r.InvalidatedAt = record.FormatTime(l.GetInvalidatedAt())
	}
	return r
}

// memoryID reads a required id argument.
func memoryID(a *sdk.Args, name string) (string, error) {
	id, err := a.Required(name)
	if err != nil {
		return "", err
	}
	if err := record.ValidateID(name, id); err != nil {
		return "", err
	}
	return id, nil
}

// relation reads an optional relation argument ("" when absent and def is "").
func relation(a *sdk.Args, def string) (string, error) {
	rel, err := a.Str("relation", def)
	if err != nil || (rel == "" && def == "") {
		return rel, err
	}
	return rel, record.ValidateRelation("relation", rel)
}

// timeArg reads an optional RFC 3339 argument as Unix nanoseconds; ok is
// false when it is absent or blank.
func timeArg(a *sdk.Args, name string, bound bool) (ns int64, ok bool, err error) {
	if bound {
		return a.TimeBound(name)
	}
	return a.Time(name)
}

// notZero keeps an instant from meaning "absent" in an engine filter:
// 1970-01-01T00:00:00Z itself becomes 1 ns earlier, which selects the
// same links (every link starts after it).
func notZero(ns int64) int64 {
	if ns == 0 {
		return -1
	}
	return ns
}
