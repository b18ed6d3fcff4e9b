package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/termstats"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The reads every backend answers from its in-memory keyword index alone.

// ExpiringSoon is how far ahead Stats counts memories about to expire.
const ExpiringSoon = time.Hour

// CountNamespaces counts live memories per exact namespace at or under a
// prefix (the namespace itself, or one starting with prefix + "/": literal
// and case-sensitive, unlike the reference's LIKE), densest first: no
// record is read.
func CountNamespaces(ctx context.Context, idx *index.Index, now int64, req *aimemoryv1.CountNamespacesRequest) (*aimemoryv1.CountNamespacesResponse, error) {
	prefix := req.GetPrefix()
	if prefix != "" {
		if err := record.ValidateNamespace("prefix", prefix); err != nil {
			return nil, err
		}
	}
	counts, total := idx.Namespaces(prefix, now, authz.Of(ctx).Reads)
	resp := &aimemoryv1.CountNamespacesResponse{Total: total}
	for ns, n := range counts {
		resp.Namespaces = append(resp.Namespaces, &aimemoryv1.CountByKey{Key: ns, Count: n})
	}
	sortCounts(resp.Namespaces)
	if limit := int(req.GetLimit()); limit > 0 && len(resp.Namespaces) > limit {
		resp.Namespaces = resp.Namespaces[:limit]
	}
	return resp, nil
}

// IndexStats is the part of Stats the index knows: totals, tiers,
// namespaces, expiring soon and the index's size, counting only what the
// caller may read. wide is true for a caller granted every namespace
// (authz.Grant.Everything), the only one to whom the backend shows
// store-wide counts too.
func IndexStats(ctx context.Context, idx *index.Index, now int64) (resp *aimemoryv1.StatsResponse, wide bool) {
	resp = &aimemoryv1.StatsResponse{}
	g := authz.Of(ctx)
	t := idx.Tally(now, int64(ExpiringSoon), g.Reads)
	resp.Total, resp.ExpiringSoon = t.Total, t.ExpiringSoon
	resp.Indexed = t.Total
	if g.Everything() {
		resp.IndexTerms, resp.IndexPostingsBytes = t.Terms, t.PostingBytes
	}
	for i, n := range t.ByTier {
		if n > 0 {
			resp.ByTier = append(resp.ByTier, &aimemoryv1.CountByKey{Key: record.Tiers[i], Count: n})
		}
	}
	for ns, n := range t.ByNamespace {
		resp.ByNamespace = append(resp.ByNamespace, &aimemoryv1.CountByKey{Key: ns, Count: n})
	}
	sortCounts(resp.ByTier)
	sortCounts(resp.ByNamespace)
	return resp, g.Everything()
}

// sortCounts orders counts densest first, then by key.
func sortCounts(l []*aimemoryv1.CountByKey) {
	slices.SortFunc(l, func(a, b *aimemoryv1.CountByKey) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
	})
}

// KeywordQuery is a SearchMemories request as a query of the keyword
// index (f its compiled filter): MATCH_MODE_ALL (the default) needs every
// query term; ANY (recall) at least one, and drops function words from a
// query that has other words. The rank mode is still checked, so a bad
// value is an error, not a silent default (both rank alike: index/rank.go).
func KeywordQuery(an *keyword.Analyzer, req *aimemoryv1.SearchMemoriesRequest, f *index.Filter, now int64) (index.Query, error) {
	var all bool
	switch req.GetMatch() {
	case aimemoryv1.MatchMode_MATCH_MODE_UNSPECIFIED, aimemoryv1.MatchMode_MATCH_MODE_ALL:
		all = true
	case aimemoryv1.MatchMode_MATCH_MODE_ANY:
	default:
		return index.Query{}, &record.FieldError{Field: "match", Rule: fmt.Sprintf("must be ALL or ANY (got %d)", req.GetMatch())}
	}
	switch req.GetRank() {
	case aimemoryv1.RankMode_RANK_MODE_UNSPECIFIED, aimemoryv1.RankMode_RANK_MODE_SEARCH, aimemoryv1.RankMode_RANK_MODE_RECALL:
	default:
		return index.Query{}, &record.FieldError{Field: "rank", Rule: fmt.Sprintf("must be SEARCH or RECALL (got %d)", req.GetRank())}
	}
	if err := record.ValidateQuery("query", req.GetQuery()); err != nil {
		return index.Query{}, err
	}
	terms := an.Query(req.GetQuery())
	if len(terms) > termstats.MaxQueryTerms {
		return index.Query{}, &record.FieldError{Field: "query", Rule: fmt.Sprintf("must have at most %d distinct words (got %d)", termstats.MaxQueryTerms, len(terms))}
	}
	if !all {
		terms = keyword.DropFunctionWords(terms)
	}
	return index.Query{Terms: terms, All: all, Prefix: all, Filter: f, LiveAt: now, Limit: int(req.GetLimit()), Now: now}, nil
}

// MaxContradictions bounds StoreMemoryResponse.potential_contradictions.
const MaxContradictions = 5

// Contradictions lists up to MaxContradictions other memories of m's
// namespace, live or expired, sharing a word of its title: what a new
// memory may contradict.
func Contradictions(an *keyword.Analyzer, idx *index.Index, m *aimemoryv1.Memory) []string {
	terms := rules.Dedupe(an.Terms(nil, m.Title))
	hits := idx.Related(terms, m.Namespace, m.Id, MaxContradictions)
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

// ReadFilter compiles a request's filter with the read rule (authz):
// nothing the caller may not read is ever matched.
func ReadFilter(ctx context.Context, in *aimemoryv1.Filter) (*index.Filter, error) {
	f, err := index.CompileFilter(in)
	if err != nil {
		return nil, err
	}
	f.Within(authz.Of(ctx).Reader())
	return f, nil
}

// List is ListMemories' answer over the index: the filter's live memories
// by priority, and with with_recent also by most recent update, each
// hit's record read by records (a backend's read of its own records).
func List(idx *index.Index, f *index.Filter, now int64, req *aimemoryv1.ListMemoriesRequest,
	records func([]index.Hit) ([]*aimemoryv1.Memory, error)) (*aimemoryv1.ListMemoriesResponse, error) {
	if !req.GetWithRecent() {
		mems, err := records(idx.List(f, now, int(req.GetLimit())))
		if err != nil {
			return nil, err
		}
		return &aimemoryv1.ListMemoriesResponse{Memories: mems}, nil
	}
	hits, recent := idx.ListBoth(f, now, int(req.GetLimit()))
	mems, err := records(hits)
	if err != nil {
		return nil, err
	}
	rmems, err := records(recent)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.ListMemoriesResponse{Memories: mems, Recent: rmems}, nil
}
