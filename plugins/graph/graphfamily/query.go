package graphfamily

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// kg_query limits (family-graph §4, with issue 3's changes).
const (
	defaultQueryDepth = 1
	maxQueryDepth     = 5
	defaultQueryLimit = 200
	maxQueryLimit     = 1000
)

var queryArgs = argNames(querySchema)

var directions = map[string]aimemoryv1.Direction{
	"out":  aimemoryv1.Direction_DIRECTION_OUT,
	"in":   aimemoryv1.Direction_DIRECTION_IN,
	"both": aimemoryv1.Direction_DIRECTION_BOTH,
}

// queryParams is a validated memory_kg_query call.
type queryParams struct {
	source    string
	maxDepth  int
	direction aimemoryv1.Direction
	relation  string
	validAt   int64 // 0 = any time
	observers *aimemoryv1.AgentSet
	limit     int
}

func parseQuery(raw []byte) (*queryParams, error) {
	a, err := sdk.ParseArgs(raw, queryArgs)
	if err != nil {
		return nil, err
	}
	p := &queryParams{}
	if p.source, err = memoryID(a, "source_id"); err != nil {
		return nil, err
	}
	depth, err := a.Integer("max_depth", defaultQueryDepth, 1, maxQueryDepth)
	if err != nil {
		return nil, err
	}
	p.maxDepth = int(depth)
	dir, err := a.OneOf("direction", "out", "out", "in", "both")
	if err != nil {
		return nil, err
	}
	p.direction = directions[dir]
	if p.relation, err = relation(a, ""); err != nil {
		return nil, err
	}
	at, ok, err := timeArg(a, "valid_at", false)
	if err != nil {
		return nil, err
	}
	if ok {
		p.validAt = notZero(at)
	}
	if _, present := a.Value("allowed_agents"); present {
		agents, err := a.StringList("allowed_agents")
		if err != nil {
			return nil, err
		}
		p.observers = &aimemoryv1.AgentSet{Ids: make([]string, 0, len(agents))}
		for i, id := range agents {
			id = strings.TrimSpace(id)
			if err := record.ValidateAgentID(fmt.Sprintf("allowed_agents[%d]", i), id); err != nil {
				return nil, err
			}
			p.observers.Ids = append(p.observers.Ids, id)
		}
	}
	limit, err := a.Integer("limit", defaultQueryLimit, 1, maxQueryLimit)
	if err != nil {
		return nil, err
	}
	p.limit = int(limit)
	return p, nil
}

// queryResult lists each reached memory once. via holds the ids between
// source_id and the node on one shortest path (none at depth 1); dir says,
// for direction both, which way the last hop ran.
type queryResult struct {
	Count     int       `json:"count"`
	Nodes     []linkRow `json:"nodes,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
}

func (s *service) query(ctx context.Context, call sdk.Call) (any, error) {
	p, err := parseQuery(call.Arguments)
	if err != nil {
		return nil, err
	}
	// The id as given first: a memory found by it is what resolving would
	// have returned (an exact id resolves to itself), so a full id, the
	// common case, costs no resolving round trip.
	out, err := traverse(ctx, s.eng, p)
	if errors.Is(err, errSourceNotFound) {
		if p.source, err = s.resolve(ctx, p.source); err != nil {
			return nil, err
		}
		if out, err = traverse(ctx, s.eng, p); errors.Is(err, errSourceNotFound) {
			return nil, sdk.Errorf("source_id: memory not found: %s", p.source)
		}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errSourceNotFound is traverse's answer for a source_id that names no
// live memory the caller may see.
var errSourceNotFound = errors.New("source_id: memory not found")

// hop is how the walk first reached a node: from a node of the previous
// level over link l (backwards when reversed).
type hop struct {
	node     string
	from     string
	fromRank int // position of from in its level: earlier levels first
	link     *aimemoryv1.Link
	reversed bool
}

// better orders the hops reaching one node: the earliest asserted link,
// then the earliest-ranked parent, then the relation.
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

// traverse walks breadth-first, one engine call per level: every link of
// the level's nodes passing the filters (relation, validity at valid_at,
// observer) in one batched read. Each node is reported once, at the depth
// it is first reached (so cycles end the walk there), with the hop that
// reached it; a level is ordered by that hop's validity, then creation,
// then node id, and the limit cuts the result (and the walk) there.
func traverse(ctx context.Context, eng sdk.Engine, p *queryParams) (*queryResult, error) {
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
		best := map[string]*hop{}
		consider := func(h *hop) {
			if visited[h.node] {
				return
			}
			if cur := best[h.node]; cur == nil || better(h, cur) {
				best[h.node] = h
			}
		}
		for _, l := range resp.GetLinks() {
			if r, ok := rank[l.GetSourceId()]; ok && p.direction != aimemoryv1.Direction_DIRECTION_IN {
				consider(&hop{node: l.GetTargetId(), from: l.GetSourceId(), fromRank: r, link: l})
			}
			if r, ok := rank[l.GetTargetId()]; ok && p.direction != aimemoryv1.Direction_DIRECTION_OUT {
				consider(&hop{node: l.GetSourceId(), from: l.GetTargetId(), fromRank: r, link: l, reversed: true})
			}
		}
		level := make([]*hop, 0, len(best))
		for _, h := range best {
			level = append(level, h)
		}
		slices.SortFunc(level, func(a, b *hop) int {
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
			row := newRow(h.link, h.node, nodes[h.node])
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
