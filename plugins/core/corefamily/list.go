package corefamily

import (
	"context"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// format, order ("recent": most recently updated first) and the hidden
// filters are accepted but not advertised (see hiddenFilters).
var listArgs = argNames(listSchema, append([]string{"format", "order"}, hiddenFilters...)...)

const (
	listDefaultLimit = 20
	listMaxLimit     = 200
)

// listQuery is a validated memory_list call.
type listQuery struct {
	req    aimemoryv1.ListMemoriesRequest
	format string
	recent bool // updated_at desc instead of priority desc
}

func parseList(raw []byte) (*listQuery, error) {
	a, err := sdk.ParseArgs(raw, listArgs)
	if err != nil {
		return nil, err
	}
	q := &listQuery{req: aimemoryv1.ListMemoriesRequest{Filter: &aimemoryv1.Filter{}}}
	f := q.req.Filter
	if f.Namespace, err = namespaceArg(a, "namespace"); err != nil {
		return nil, err
	}
	if f.Tier, err = tierArg(a); err != nil {
		return nil, err
	}
	if q.req.Limit, err = limitArg(a, listDefaultLimit, listMaxLimit); err != nil {
		return nil, err
	}
	if f.AgentId, err = agentArg(a); err != nil {
		return nil, err
	}
	if err := hiddenFilterArgs(a, f); err != nil {
		return nil, err
	}
	order, err := a.OneOf("order", "priority", "priority", "recent")
	if err != nil {
		return nil, err
	}
	q.recent = order == "recent"
	if q.format, err = render.FormatArg(a); err != nil {
		return nil, err
	}
	return q, nil
}

func (s *service) list(ctx context.Context, call sdk.Call) (any, error) {
	q, err := parseList(call.Arguments)
	if err != nil {
		return nil, err
	}
	var mems []*aimemoryv1.Memory
	var shorts []string
	if q.req.Limit > 0 { // 0 asks for nothing; on the wire it could read as "no limit"
		q.req.ShortIdLength = render.ShortIDLength(q.format)
		q.req.WithRecent = q.recent
		resp, err := s.eng.ListMemories(ctx, &q.req)
		if err != nil {
			return nil, sdk.EngineError(err)
		}
		mems, shorts = resp.GetMemories(), resp.GetShortIds()
		if q.recent {
			mems, shorts = resp.GetRecent(), nil // the short ids answered are the priority list's
		}
	}
	l := render.Listing{Meta: []render.Pair{{Key: "count", Val: len(mems)}}, Key: "memories", Memories: mems, Namespace: q.req.Filter.Namespace, Caller: call.Caller()}
	l.WithShortIDs(shorts)
	if q.recent && q.req.ShortIdLength > 0 {
		ids := make([]string, len(mems))
		for i, m := range mems {
			ids[i] = m.GetId()
		}
		l.ShortIDs = render.ShortIDsOf(ctx, s.eng, ids...)
	}
	return l.Render(q.format)
}
