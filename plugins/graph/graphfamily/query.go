package graphfamily

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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

// traverse is the walk in one engine call (Traverse: breadth-first, each
// node once, at the depth it is first reached, with the hop that reached
// it; the limit cuts the walk there), rendered as rows; via is rebuilt
// from each node's parent.
func traverse(ctx context.Context, eng wire.Engine, p *queryParams) (*queryResult, error) {
	resp, err := eng.Traverse(ctx, &aimemoryv1.TraverseRequest{
		SourceId: p.source, MaxDepth: int32(p.maxDepth), Direction: p.direction, Relation: p.relation,
		ValidAt: p.validAt, ObservedBy: p.observers, Limit: int32(p.limit),
	})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	if resp.GetSourceNotFound() {
		return nil, errSourceNotFound
	}
	nodes := resp.GetNodes()
	out := &queryResult{Count: len(nodes), Nodes: make([]linkRow, len(nodes)), Truncated: resp.GetTruncated()}
	for i, n := range nodes {
		row := &out.Nodes[i]
		*row = newRow(n.GetLink(), n.GetId(), n.GetTitle(), n.GetNamespace())
		row.Depth = int(n.GetDepth())
		if from := n.GetFrom(); from > 0 && int(from) <= i {
			parent := &out.Nodes[from-1]
			row.Via = append(slices.Clip(parent.Via), parent.ID)
		}
		if p.direction == aimemoryv1.Direction_DIRECTION_BOTH {
			row.Dir = "out"
			if n.GetReversed() {
				row.Dir = "in"
			}
		}
	}
	return out, nil
}
