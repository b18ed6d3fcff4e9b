package graphfamily

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The walk before the engine's Traverse: one GetLinks call per level, the
// breadth-first search here (as of 4ca015f). It stays as the reference
// the one-call walk must answer exactly like.

// refHop is how the walk first reached a node: from a node of the previous
// level over link l (backwards when reversed).
type refHop struct {
	node     string
	from     string
	fromRank int // position of from in its level: earlier levels first
	link     *aimemoryv1.Link
	reversed bool
}

// refBetter orders the hops reaching one node: the earliest asserted link,
// then the earliest-ranked parent, then the relation.
func refBetter(a, b *refHop) bool {
	return cmp.Or(cmp.Compare(a.link.GetValidFrom(), b.link.GetValidFrom()), cmp.Compare(a.link.GetCreatedAt(), b.link.GetCreatedAt()),
		cmp.Compare(a.fromRank, b.fromRank), cmp.Compare(a.link.GetRelation(), b.link.GetRelation()),
		refBoolCmp(a.reversed, b.reversed)) < 0
}

func refBoolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// levelWalk walks breadth-first, one engine call per level: every link of
// the level's nodes passing the filters (relation, validity at valid_at,
// observer) in one batched read. Each node is reported once, at the depth
// it is first reached (so cycles end the walk there), with the hop that
// reached it; a level is ordered by that hop's validity, then creation,
// then node id, and the limit cuts the result (and the walk) there.
func levelWalk(ctx context.Context, eng wire.Engine, p *queryParams) (*queryResult, error) {
	out := &queryResult{}
	visited := map[string]bool{p.source: true}
	via := map[string][]string{p.source: nil}
	frontier := []string{p.source}
	for depth := 1; depth <= p.maxDepth && len(frontier) > 0; depth++ {
		resp, err := eng.GetLinks(ctx, &aimemoryv1.GetLinksRequest{
			Ids: frontier, Direction: p.direction, Relation: p.relation,
			ValidAt: p.validAt, ObservedBy: p.observers, IncludeNodes: true,
		})
		if err != nil {
			return nil, sdk.EngineError(err)
		}
		if depth == 1 && len(resp.GetNotFound()) > 0 {
			return nil, errSourceNotFound
		}
		rank := make(map[string]int, len(frontier))
		for i, id := range frontier {
			rank[id] = i
		}
		best := map[string]*refHop{}
		consider := func(h *refHop) {
			if visited[h.node] {
				return
			}
			if cur := best[h.node]; cur == nil || refBetter(h, cur) {
				best[h.node] = h
			}
		}
		for _, l := range resp.GetLinks() {
			if r, ok := rank[l.GetSourceId()]; ok && p.direction != aimemoryv1.Direction_DIRECTION_IN {
				consider(&refHop{node: l.GetTargetId(), from: l.GetSourceId(), fromRank: r, link: l})
			}
			if r, ok := rank[l.GetTargetId()]; ok && p.direction != aimemoryv1.Direction_DIRECTION_OUT {
				consider(&refHop{node: l.GetSourceId(), from: l.GetTargetId(), fromRank: r, link: l, reversed: true})
			}
		}
		level := make([]*refHop, 0, len(best))
		for _, h := range best {
			level = append(level, h)
		}
		slices.SortFunc(level, func(a, b *refHop) int {
			return cmp.Or(cmp.Compare(a.link.GetValidFrom(), b.link.GetValidFrom()),
				cmp.Compare(a.link.GetCreatedAt(), b.link.GetCreatedAt()), cmp.Compare(a.node, b.node))
		})
		// Truncated only when a node was really left out: with the limit
		// reached at the previous level, this level is read just to know.
		if room := p.limit - len(out.Nodes); len(level) > room {
			level, out.Truncated = level[:room], true
		}
		nodes := summaries(resp.GetNodes())
		frontier = frontier[:0:0]
		for _, h := range level {
			visited[h.node] = true
			if h.from != p.source {
				via[h.node] = append(slices.Clip(via[h.from]), h.from)
			}
			row := row(h.link, h.node, nodes)
			row.Depth, row.Via = depth, via[h.node]
			if p.direction == aimemoryv1.Direction_DIRECTION_BOTH {
				row.Dir = "out"
				if h.reversed {
					row.Dir = "in"
				}
			}
			out.Nodes = append(out.Nodes, row)
			frontier = append(frontier, h.node)
		}
		if out.Truncated {
			break
		}
	}
	out.Count = len(out.Nodes)
	return out, nil
}

// TestTraverseAnswersAsLevelWalk: on a random graph with cycles, parallel
// links, invalidated and revived links and several observers, the walk in
// one engine call answers byte for byte what the walk of one GetLinks call
// per level answered, for every direction, depth, filter and limit tried.
func TestTraverseAnswersAsLevelWalk(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const n = 120
	ids := make([]string, n)
	for i := range ids {
		ids[i] = h.memory(fmt.Sprint("m", i), fmt.Sprint("ns", i%3))
	}
	r := rand.New(rand.NewPCG(3, 4))
	observers := []string{"ai:a", "ai:b", "ai:c"}
	type link struct {
		a, b int
		rel  string
	}
	var links []link
	for range 4 * n {
		a, b := r.IntN(n), r.IntN(n)
		if a == b {
			continue
		}
		l := link{a, b, record.Relations[r.IntN(len(record.Relations))]}
		if _, err := h.eng.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: ids[a], TargetId: ids[b], Relation: l.rel}); err != nil {
			t.Fatal(err)
		}
		links = append(links, l)
	}
	// Some links closed (in the past or ahead), some of those revived.
	var instants []int64
	for i, l := range links {
		if i%5 != 0 {
			continue
		}
		req := &aimemoryv1.InvalidateLinkRequest{SourceId: ids[l.a], TargetId: ids[l.b], Relation: l.rel}
		resp, err := h.eng.InvalidateLink(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		instants = append(instants, resp.GetLink().GetValidFrom(), resp.GetLink().GetValidUntil()-1)
		if i%15 == 0 {
			if _, err := h.eng.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: ids[l.a], TargetId: ids[l.b], Relation: l.rel}); err != nil {
				t.Fatal(err)
			}
		}
	}
	render := func(out *queryResult, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		raw, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	dirs := []aimemoryv1.Direction{aimemoryv1.Direction_DIRECTION_OUT, aimemoryv1.Direction_DIRECTION_IN, aimemoryv1.Direction_DIRECTION_BOTH}
	cases, nonEmpty := 0, 0
	for i := range 400 {
		p := &queryParams{
			source: ids[r.IntN(n)], maxDepth: 1 + r.IntN(maxQueryDepth), direction: dirs[r.IntN(len(dirs))],
			limit: []int{1, 3, 10, 50, 1000}[r.IntN(5)],
		}
		if i%4 == 1 {
			p.relation = record.Relations[r.IntN(len(record.Relations))]
		}
		if i%3 == 2 {
			p.validAt = instants[r.IntN(len(instants))]
		}
		if i%7 == 3 {
			p.observers = &aimemoryv1.AgentSet{Ids: observers[:1+r.IntN(2)]}
		}
		if i == 0 {
			p.source = "0190aaaa-0000-7000-8000-000000000000" // no such memory
		}
		want := render(levelWalk(ctx, h.eng, p))
		if got := render(traverse(ctx, h.eng, p)); got != want {
			t.Fatalf("%+v:\none call  %s\nper level %s", p, got, want)
		}
		cases++
		if len(want) > 40 {
			nonEmpty++
		}
	}
	if nonEmpty < cases/2 {
		t.Fatalf("only %d of %d walks reached anything", nonEmpty, cases)
	}
}
