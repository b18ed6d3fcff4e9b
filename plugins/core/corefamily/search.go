package corefamily

import (
	"context"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var searchArgs = argNames(searchSchema, append([]string{"format"}, hiddenFilters...)...) // see hiddenFilters

const (
	searchDefaultLimit = 20
	searchMaxLimit     = 200
)

// searchQuery is a validated memory_search call: every word must match.
type searchQuery struct {
	req    aimemoryv1.SearchMemoriesRequest
	format string
}

func parseSearch(raw []byte) (*searchQuery, error) {
	a, err := sdk.ParseArgs(raw, searchArgs)
	if err != nil {
		return nil, err
	}
	q := &searchQuery{req: aimemoryv1.SearchMemoriesRequest{
		Match:  aimemoryv1.MatchMode_MATCH_MODE_ALL,
		Rank:   aimemoryv1.RankMode_RANK_MODE_SEARCH,
		Filter: &aimemoryv1.Filter{},
	}}
	f := q.req.Filter
	if q.req.Query, err = a.Query("query"); err != nil {
		return nil, err
	}
	if f.Namespace, err = namespaceArg(a, "namespace"); err != nil {
		return nil, err
	}
	if f.Tier, err = tierArg(a); err != nil {
		return nil, err
	}
	if q.req.Limit, err = limitArg(a, searchDefaultLimit, searchMaxLimit); err != nil {
		return nil, err
	}
	if f.AgentId, err = agentArg(a); err != nil {
		return nil, err
	}
	if err := hiddenFilterArgs(a, f); err != nil {
		return nil, err
	}
	if f.AsAgent, err = namespaceArg(a, "as_agent"); err != nil {
		return nil, err
	}
	if q.format, err = render.FormatArg(a); err != nil {
		return nil, err
	}
	return q, nil
}

func (s *service) search(ctx context.Context, call sdk.Call) (any, error) {
	q, err := parseSearch(call.Arguments)
	if err != nil {
		return nil, err
	}
	var mems []*aimemoryv1.Memory
	var shorts []string
	if q.req.Limit > 0 { // 0 asks for nothing; on the wire it could read as "no limit"
		q.req.ShortIdLength = render.ShortIDLength(q.format)
		resp, err := s.eng.SearchMemories(ctx, &q.req)
		if err != nil {
			return nil, sdk.EngineError(err)
		}
		for _, r := range resp.GetResults() {
			mems = append(mems, r.GetMemory())
		}
		shorts = resp.GetShortIds()
	}
	l := render.Listing{Meta: []render.Pair{{Key: "count", Val: len(mems)}}, Key: "results", Memories: mems, Namespace: q.req.GetFilter().GetNamespace(), Caller: call.Caller()}
	l.WithShortIDs(shorts)
	return l.Render(q.format)
}
