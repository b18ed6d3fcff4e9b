package rules

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// MaxLinkHistory bounds the closed intervals a link keeps (oldest dropped).
const MaxLinkHistory = 32

// Timeline limits (family-graph §5).
const (
	DefaultTimelineLimit = 200
	MaxTimelineLimit     = 1000
)

// Holds reports whether an interval [from, until) holds t; until 0 is
// open. A link with no start (from 0) holds no instant.
func Holds(from, until, t int64) bool {
	return from != 0 && from <= t && (until == 0 || t < until)
}

// LinkFilter is GetLinks' graph filter; a nil filter keeps every link as is.
type LinkFilter struct {
	Relation  string
	validAt   int64           // 0 = any time
	observers map[string]bool // nil = anyone
}

func NewLinkFilter(req *aimemoryv1.GetLinksRequest) (*LinkFilter, error) {
	if req.GetRelation() == "" && req.GetValidAt() == 0 && req.GetObservedBy() == nil {
		return nil, nil
	}
	f := &LinkFilter{Relation: req.GetRelation(), validAt: req.GetValidAt()}
	if f.Relation != "" {
		if err := record.ValidateRelation("relation", f.Relation); err != nil {
			return nil, err
		}
	}
	if set := req.GetObservedBy(); set != nil {
		f.observers = make(map[string]bool, len(set.GetIds()))
		for i, id := range set.GetIds() {
			if err := record.ValidateAgentID(fmt.Sprintf("observed_by.ids[%d]", i), id); err != nil {
				return nil, err
			}
			f.observers[id] = true
		}
	}
	return f, nil
}

// view returns l as the filter sees it: nil when rejected; at valid_at, a
// copy carrying the interval that holds that instant.
func (f *LinkFilter) View(l *aimemoryv1.Link) *aimemoryv1.Link {
	if f == nil {
		return l
	}
	if f.Relation != "" && l.Relation != f.Relation {
		return nil
	}
	if f.validAt != 0 {
		if l = LinkAt(l, f.validAt); l == nil {
			return nil
		}
	}
	if f.observers != nil && !f.observers[l.ObservedBy] {
		return nil
	}
	return l
}

// LinkAt is l as it was at t: l itself when its current interval holds t,
// a copy with the earlier interval holding t in its place, or nil.
func LinkAt(l *aimemoryv1.Link, t int64) *aimemoryv1.Link {
	if Holds(l.ValidFrom, l.ValidUntil, t) {
		return l
	}
	for _, h := range l.History {
		if Holds(h.ValidFrom, h.ValidUntil, t) {
			return withInterval(l, h)
		}
	}
	return nil
}

// withInterval is a copy of l (without history) showing interval h.
func withInterval(l *aimemoryv1.Link, h *aimemoryv1.LinkValidity) *aimemoryv1.Link {
	return &aimemoryv1.Link{
		SourceId: l.SourceId, TargetId: l.TargetId, Relation: l.Relation, CreatedAt: l.CreatedAt,
		ValidFrom: h.ValidFrom, ValidUntil: h.ValidUntil, ObservedBy: h.ObservedBy,
		InvalidatedBy: h.InvalidatedBy, InvalidatedAt: h.InvalidatedAt,
	}
}

// Intervals lists every validity interval of l, oldest first, as links
// without history.
func Intervals(l *aimemoryv1.Link) []*aimemoryv1.Link {
	out := make([]*aimemoryv1.Link, 0, len(l.History)+1)
	for _, h := range l.History {
		out = append(out, withInterval(l, h))
	}
	cur := proto.Clone(l).(*aimemoryv1.Link)
	cur.History = nil
	return append(out, cur)
}

// CloseInterval moves l's current interval into its history, unless it
// held no instant (an end before its start).
func CloseInterval(l *aimemoryv1.Link) {
	if l.ValidFrom == 0 || (l.ValidUntil != 0 && l.ValidUntil <= l.ValidFrom) {
		return
	}
	l.History = append(l.History, &aimemoryv1.LinkValidity{
		ValidFrom: l.ValidFrom, ValidUntil: l.ValidUntil, ObservedBy: l.ObservedBy,
		InvalidatedBy: l.InvalidatedBy, InvalidatedAt: l.InvalidatedAt,
	})
	if n := len(l.History); n > MaxLinkHistory {
		l.History = slices.Delete(l.History, 0, n-MaxLinkHistory)
	}
}
