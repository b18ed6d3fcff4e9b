package powerfamily

import (
	"context"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var expandArgs = argNames(expandSchema)

// Query expansion with no model: the terms that co-occur with the query's
// in the memories it matches, scored by the engine (Corpus.RelatedTerms:
// pointwise mutual information weighted by support). It knows only the
// store's vocabulary: a synonym no memory uses is not found.
const (
	methodPMI         = "pmi"
	defaultExpansions = 8
	maxExpansions     = 50
)

type expandResult struct {
	Method        string   `json:"method"`
	Reason        string   `json:"reason,omitempty"`
	ExpandedTerms []string `json:"expanded_terms"`
	// Memories the terms were mined from.
	Matched uint32 `json:"matched,omitempty"`
}

func (s *service) expandQuery(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, expandArgs)
	if err != nil {
		return nil, err
	}
	q, err := a.Query("query")
	if err != nil {
		return nil, err
	}
	ns, err := a.NamespaceFilter("namespace")
	if err != nil {
		return nil, err
	}
	limit, err := a.Integer("limit", defaultExpansions, 1, maxExpansions)
	if err != nil {
		return nil, err
	}
	reply, reason, err := s.ask(ctx, expandPrompt(q))
	if err != nil {
		return nil, err
	}
	if terms := replyLines(reply); len(terms) > 0 {
		res := expandResult{Method: methodLLM, ExpandedTerms: []string{}}
		for _, t := range terms {
			if t != strings.ToLower(strings.TrimSpace(q)) && len(res.ExpandedTerms) < int(limit) {
				res.ExpandedTerms = append(res.ExpandedTerms, t)
			}
		}
		return res, nil
	} else if reply != "" {
		reason = "the chat endpoint's answer held no term"
	}
	resp, err := s.eng.RelatedTerms(ctx, &aimemoryv1.RelatedTermsRequest{
		Query: q, Filter: &aimemoryv1.Filter{Namespace: ns}, Limit: uint32(limit),
	})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	res := expandResult{Method: methodPMI, Reason: reason, ExpandedTerms: []string{}, Matched: resp.GetMatched()}
	for _, t := range resp.GetRelated() {
		res.ExpandedTerms = append(res.ExpandedTerms, t.GetWord())
	}
	return res, nil
}
