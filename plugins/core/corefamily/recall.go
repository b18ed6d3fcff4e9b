package corefamily

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// context_tokens is accepted but not advertised: it only steers semantic
// recall, which this build does not have, so showing it would cost every
// agent tokens for nothing.
var recallArgs = argNames(recallSchema, "context_tokens", "format")

const (
	recallDefaultLimit = 10
	recallMaxLimit     = 50
	maxBudgetTokens    = math.MaxInt32
)

// recallQuery is a validated memory_recall call.
type recallQuery struct {
	context   string
	filter    aimemoryv1.Filter
	limit     uint32
	budget    int64
	hasBudget bool
	format    string
}

func parseRecall(raw []byte) (*recallQuery, error) {
	a, err := sdk.ParseArgs(raw, recallArgs)
	if err != nil {
		return nil, err
	}
	q := &recallQuery{}
	if q.context, err = a.Query("context"); err != nil {
		return nil, err
	}
	f := &q.filter
	if f.Namespace, err = namespaceArg(a, "namespace"); err != nil {
		return nil, err
	}
	// Recall's hierarchy rule: a nested namespace also reaches its ancestors.
	f.NamespaceAncestors = strings.Contains(f.Namespace, "/")
	if q.limit, err = limitArg(a, recallDefaultLimit, recallMaxLimit); err != nil {
		return nil, err
	}
	if err := hiddenFilterArgs(a, f); err != nil { // advertised by recall
		return nil, err
	}
	if f.AsAgent, err = namespaceArg(a, "as_agent"); err != nil {
		return nil, err
	}
	_, q.hasBudget = a.Value("budget_tokens")
	if q.budget, err = a.Integer("budget_tokens", 0, 0, maxBudgetTokens); err != nil {
		return nil, err
	}
	// context_tokens steer semantic recall only; keyword mode checks and ignores them.
	if _, err = a.StringList("context_tokens"); err != nil {
		return nil, err
	}
	if q.format, err = render.FormatArg(a); err != nil {
		return nil, err
	}
	return q, nil
}

// tagArg reads recall's one tag (a string, not an array).
func tagArg(a *sdk.Args) (string, error) {
	tag, err := a.Str("tags", "")
	if err != nil || tag == "" {
		return "", err
	}
	if err := record.ValidateTags("tags", []string{tag}); err != nil {
		var fe *record.FieldError
		if errors.As(err, &fe) {
			return "", &record.FieldError{Field: "tags", Rule: fe.Rule}
		}
		return "", err
	}
	return tag, nil
}

// timeArg reads an optional RFC 3339 time as Unix nanoseconds (0 = absent),
// so it is compared as a time, not as text.
func timeArg(a *sdk.Args, name string) (int64, error) {
	ns, _, err := a.TimeBound(name)
	return ns, err
}

func (s *service) recall(ctx context.Context, call sdk.Call) (any, error) {
	q, err := parseRecall(call.Arguments)
	if err != nil {
		return nil, err
	}
	var hits []scored
	mode, reason := "keyword", ""
	if q.limit > 0 {
		if hits, mode, reason, err = s.rank(ctx, q); err != nil {
			return nil, err
		}
	}
	fill, err := s.fillBudget(q, hits)
	if err != nil {
		return nil, err
	}
	hits = hits[:fill.taken]
	hits = s.touch(ctx, hits)
	std := s.standards(ctx, q.filter.Namespace)
	hits = withoutStandards(hits, std)

	meta := []render.Pair{{Key: "count", Val: len(hits)}, {Key: "mode", Val: mode}, {Key: "tokens_used", Val: fill.used}}
	if reason != "" {
		meta = append(meta, render.Pair{Key: "semantic_reason", Val: reason})
	}
	if q.hasBudget {
		meta = append(meta, render.Pair{Key: "budget_tokens", Val: q.budget})
		if fill.overflow {
			meta = append(meta, render.Pair{Key: "budget_overflow", Val: true})
		}
		if fill.dropped > 0 {
			meta = append(meta, render.Pair{Key: "memories_dropped", Val: fill.dropped})
		}
	}
	l := render.Listing{Meta: meta, Key: "memories", Scores: []float64{}, Namespace: q.filter.Namespace,
		Caller: call.Caller(), Budgeted: q.hasBudget, Standards: std}
	shorts := make([]string, len(hits))
	for i, h := range hits {
		l.Memories = append(l.Memories, h.mem)
		l.Scores = append(l.Scores, h.score)
		shorts[i] = h.short
	}
	l.WithShortIDs(shorts)
	if q.format == render.TOONCompact && len(std) > 0 {
		if l.ShortIDs == nil {
			l.ShortIDs = map[string]string{}
		}
		maps.Copy(l.ShortIDs, render.ShortIDsOf(ctx, s.eng, standardIDs(std)...))
	}
	return l.Render(q.format)
}

// Recall's bookkeeping (collecting expired memories, counting accesses) is
// a write, and a write fails on a full disk where a read still works. So it
// is best effort: a failure is logged to stderr and the recall answers with
// what it read. Chosen over batching it off the read path: the result still
// shows the touched records (access count, expiry, promotion), nothing is
// queued in a plugin that may be killed at any moment, and a failed touch
// costs only that recall's bookkeeping.

// rank collects expired memories, then asks for the best matches of any
// context word and applies the hierarchy proximity boost. Search never
// returns an expired memory, so a failed collection changes no result.
//
// With the data dir's embedder it asks for hybrid ranking (keyword and
// vector candidates fused by the engine); mode says which it got, and
// reason why it fell back to keyword when it did.
func (s *service) rank(ctx context.Context, q *recallQuery) (_ []scored, mode, reason string, _ error) {
	if _, err := s.eng.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil {
		s.log.Warn("recall: collecting expired memories failed; answering without it", "err", err)
	}
	resp, err := s.eng.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{
		Query:         q.context,
		Match:         aimemoryv1.MatchMode_MATCH_MODE_ANY,
		Rank:          aimemoryv1.RankMode_RANK_MODE_RECALL,
		Filter:        &q.filter,
		Limit:         q.limit,
		ShortIdLength: render.ShortIDLength(q.format),
		Semantic:      true,
	})
	if err != nil {
		return nil, "", "", sdk.EngineError(err)
	}
	hits := make([]scored, 0, len(resp.GetResults()))
	shorts := resp.GetShortIds()
	for i, r := range resp.GetResults() {
		h := scored{mem: r.GetMemory(), score: r.GetScore()}
		if i < len(shorts) {
			h.short = shorts[i]
		}
		hits = append(hits, h)
	}
	if q.filter.NamespaceAncestors {
		applyProximity(hits, q.filter.Namespace)
	}
	mode = resp.GetMode()
	if mode == "" {
		mode = "keyword"
	}
	return hits, mode, resp.GetSemanticReason(), nil
}

// applyProximity favours memories nearer the query namespace (data-model
// §9.4), but only among near-ties, like every other prior (docs/RETRIEVAL.md):
// score × 1/(1+0.02·min(d,5)), d = how many levels above it a memory sits,
// so at most 0.91. The reference's 1/(1+0.3·d) halved a match three levels up
// and let a weaker one nearer by outrank it. It runs after the limit cut, so
// it only re-orders the survivors.
func applyProximity(hits []scored, ns string) {
	depth := record.Depth(ns)
	for i := range hits {
		d := min(max(depth-record.Depth(hits[i].mem.GetNamespace()), 0), 5)
		hits[i].score /= 1 + 0.02*float64(d)
	}
	slices.SortStableFunc(hits, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
}

// budgetFill is the outcome of the token budget (data-model §9.5).
type budgetFill struct {
	taken    int // how many of the ranked hits survive
	used     int // tokens_used
	overflow bool
	dropped  int
}

// fillBudget takes hits in rank order until the next would exceed the
// budget; the top hit is kept even alone over budget (overflow), except
// with a budget of 0. Tokens are counted on the content as the result
// carries it (cut at render.ContentCut): that is what the agent pays for.
// Without a budget, tokens_used is the cheap estimate bytes/4.
func (s *service) fillBudget(q *recallQuery, hits []scored) (budgetFill, error) {
	if !q.hasBudget {
		bytes := 0
		for _, h := range hits {
			bytes += len(render.CutContent(h.mem.GetId(), h.mem.GetContent()))
		}
		return budgetFill{taken: len(hits), used: bytes / 4}, nil
	}
	fill := budgetFill{}
	for _, h := range hits {
		if q.budget == 0 {
			break
		}
		n, err := s.tokens.count(render.CutContent(h.mem.GetId(), h.mem.GetContent()))
		if err != nil {
			return budgetFill{}, sdk.Errorf("counting tokens: %v", err)
		}
		if int64(fill.used+n) > q.budget {
			if fill.taken == 0 {
				fill.taken, fill.used, fill.overflow = 1, n, true
			}
			break
		}
		fill.taken++
		fill.used += n
	}
	fill.dropped = len(hits) - fill.taken
	return fill, nil
}

// touch records the access of every returned memory and answers with the
// touched records (access count, expiry, tier after auto-promotion); if the
// touch fails, with the records as read.
func (s *service) touch(ctx context.Context, hits []scored) []scored {
	if len(hits) == 0 {
		return hits
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.mem.GetId()
	}
	resp, err := s.eng.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: ids})
	if err != nil {
		s.log.Warn("recall: recording access failed; answering without it", "memories", len(ids), "err", err)
		return hits
	}
	touched := make(map[string]*aimemoryv1.Memory, len(resp.GetMemories()))
	for _, m := range resp.GetMemories() {
		touched[m.GetId()] = m
	}
	for i, h := range hits {
		if m, ok := touched[h.mem.GetId()]; ok {
			hits[i].mem = m
		}
	}
	return hits
}
