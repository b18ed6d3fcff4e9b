package ops

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Traverse limits (memory_kg_query's, family-graph §4).
const (
	MaxTraverseDepth = 5
	MaxTraverseLimit = 1000
)

// Walk is a validated Traverse request: each level's GetLinks request
// (the ids filled in per level) and its filter.
type Walk struct {
	level    *aimemoryv1.GetLinksRequest
	filter   *rules.LinkFilter
	source   string
	maxDepth int
	limit    int
}

// ValidateTraverse checks a Traverse request.
func ValidateTraverse(req *aimemoryv1.TraverseRequest) (*Walk, error) {
	if err := record.ValidateID("source_id", req.GetSourceId()); err != nil {
		return nil, err
	}
	if d := req.GetMaxDepth(); d < 1 || d > MaxTraverseDepth {
		return nil, &record.FieldError{Field: "max_depth", Rule: fmt.Sprintf("must be 1 to %d (got %d)", MaxTraverseDepth, d)}
	}
	if n := req.GetLimit(); n < 1 || n > MaxTraverseLimit {
		return nil, &record.FieldError{Field: "limit", Rule: fmt.Sprintf("must be 1 to %d (got %d)", MaxTraverseLimit, n)}
	}
	w := &Walk{
		level: &aimemoryv1.GetLinksRequest{
			Ids: []string{req.GetSourceId()}, Direction: req.GetDirection(), Relation: req.GetRelation(),
			ValidAt: req.GetValidAt(), ObservedBy: req.GetObservedBy(),
		},
		source: req.GetSourceId(), maxDepth: int(req.GetMaxDepth()), limit: int(req.GetLimit()),
	}
	var err error
	if w.filter, err = ValidateGetLinks(w.level); err != nil {
		return nil, err
	}
	return w, nil
}

// hop is how the walk first reached a node: from a node of the previous
// level over link l (backwards when reversed).
type hop struct {
	node     string
	fromRank int // position of from in its level
	from     int32
	link     *aimemoryv1.Link
	reversed bool
}

// better orders the hops reaching one node: the earliest asserted link,
// then the earliest-ranked parent, then the relation, forward first.
func better(a, b *hop) bool {
	return cmp.Or(cmp.Compare(a.link.GetValidFrom(), b.link.GetValidFrom()), cmp.Compare(a.link.GetCreatedAt(), b.link.GetCreatedAt()),
		cmp.Compare(a.fromRank, b.fromRank), cmp.Compare(a.link.GetRelation(), b.link.GetRelation()),
		boolCmp(a.reversed, b.reversed)) < 0
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// TraverseAnswer is Traverse's answer: the walk breadth-first, one
// GetLinks answer (LinksAnswer, without nodes) per level over the reads
// level returns for that level's ids (one snapshot for every level, or
// one per level), summarising only the nodes reported; what readable
// (the caller's read rule) hides is not walked.
func TraverseAnswer(readable func(ns string) bool, w *Walk, level func(ids []string) (LinkReads, error)) (*aimemoryv1.TraverseResponse, error) {
	out := &aimemoryv1.TraverseResponse{}
	// The position in out.Nodes (plus one; 0 = the source) of every node
	// reported, which also makes it visited.
	reported := map[string]int32{w.source: 0}
	frontier := []int32{0}
	dir := w.level.GetDirection()
	for depth := 1; depth <= w.maxDepth && len(frontier) > 0; depth++ {
		r, err := level(w.level.Ids)
		if err != nil {
			return nil, err
		}
		resp, err := LinksAnswer(readable, w.level, w.filter, r)
		if err != nil {
			return nil, err
		}
		if depth == 1 && len(resp.GetNotFound()) > 0 {
			return &aimemoryv1.TraverseResponse{SourceNotFound: true}, nil
		}
		rank := make(map[string]int, len(frontier))
		for i, id := range w.level.Ids {
			rank[id] = i
		}
		best := map[string]*hop{}
		consider := func(h *hop) {
			if _, done := reported[h.node]; done {
				return
			}
			if cur := best[h.node]; cur == nil || better(h, cur) {
				best[h.node] = h
			}
		}
		for _, l := range resp.GetLinks() {
			if i, ok := rank[l.GetSourceId()]; ok && dir != aimemoryv1.Direction_DIRECTION_IN {
				consider(&hop{node: l.GetTargetId(), fromRank: i, from: frontier[i], link: l})
			}
			if i, ok := rank[l.GetTargetId()]; ok && dir != aimemoryv1.Direction_DIRECTION_OUT {
				consider(&hop{node: l.GetSourceId(), fromRank: i, from: frontier[i], link: l, reversed: true})
			}
		}
		hops := make([]*hop, 0, len(best))
		for _, h := range best {
			hops = append(hops, h)
		}
		slices.SortFunc(hops, func(a, b *hop) int {
			return cmp.Or(cmp.Compare(a.link.GetValidFrom(), b.link.GetValidFrom()),
				cmp.Compare(a.link.GetCreatedAt(), b.link.GetCreatedAt()), cmp.Compare(a.node, b.node))
		})
		// Truncated only when a node was really left out: with the limit
		// reached at the previous level, this level is read just to know.
		if room := w.limit - len(out.Nodes); len(hops) > room {
			hops, out.Truncated = hops[:room], true
		}
		frontier = frontier[:0:0]
		ids := make([]string, 0, len(hops))
		for _, h := range hops {
			n, err := r.Node(h.node)
			if err != nil {
				return nil, err
			}
			out.Nodes = append(out.Nodes, &aimemoryv1.TraversedNode{
				Id: h.node, Depth: int32(depth), From: h.from, Link: hopLink(h.link), Reversed: h.reversed,
				Title: n.GetTitle(), Namespace: n.GetNamespace(),
			})
			reported[h.node] = int32(len(out.Nodes))
			frontier = append(frontier, int32(len(out.Nodes)))
			ids = append(ids, h.node)
		}
		w.level.Ids = ids
		if out.Truncated {
			break
		}
	}
	return out, nil
}

// hopLink is l without its ends and history: what a reported hop shows.
func hopLink(l *aimemoryv1.Link) *aimemoryv1.Link {
	return &aimemoryv1.Link{
		Relation: l.Relation, CreatedAt: l.CreatedAt, ValidFrom: l.ValidFrom, ValidUntil: l.ValidUntil,
		ObservedBy: l.ObservedBy, InvalidatedBy: l.InvalidatedBy, InvalidatedAt: l.InvalidatedAt,
	}
}
