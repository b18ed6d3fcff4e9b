package termstats

import (
	"fmt"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The Corpus API's bounds: a text is at most a memory's title and content;
// a query as long as search allows. MaxQueryTerms bounds a search query's
// distinct words (the index's per-slot match counter is 16 bits; real
// queries have a few dozen at most).
const (
	MaxQueryTerms     = 1024
	maxStatsText      = 4*record.MaxTitleChars + 1 + record.MaxContentBytes
	defaultRelated    = 10
	maxRelated        = 100
	defaultRelatedSet = 200
	maxRelatedSet     = 1000
)

// Source is what a backend answers the Corpus API from: its analyzer, its
// in-memory keyword index, the caller's filter compiled, the time, and a
// way to read the records of index hits. Every backend answers through it,
// so their answers cannot drift apart.
type Source struct {
	An  *keyword.Analyzer
	Idx *index.Index
	// DocFreqs are the statistics the caller may see (CallerDocFreqs).
	DocFreqs DocFreqs
	Filter   func(*aimemoryv1.Filter) (*index.Filter, error)
	Now      int64
	Records  func([]index.Hit) ([]*aimemoryv1.Memory, error)
}

// AnswerTermStats: the text's terms with their document frequencies, and
// on request the existing tags (of memories the caller may read) the text
// spells out.
func AnswerTermStats(src Source, req *aimemoryv1.TermStatsRequest) (*aimemoryv1.TermStatsResponse, error) {
	if n := len(req.GetText()); n > maxStatsText {
		return nil, &record.FieldError{Field: "text", Rule: fmt.Sprintf("must be at most %d bytes (got %d)", maxStatsText, n)}
	}
	resp, terms := TermStats(src.An, req.GetText(), src.DocFreqs)
	if req.GetTags() {
		f, err := src.Filter(nil)
		if err != nil {
			return nil, err
		}
		resp.Tags = MatchingTags(src.An, src.Idx.TagCounts(f, src.Now), terms)
	}
	return resp, nil
}

// AnswerRelatedTerms mines the best recall matches of the query (any
// term, function words dropped, as recall ranks them) for co-occurring
// terms.
func AnswerRelatedTerms(src Source, req *aimemoryv1.RelatedTermsRequest) (*aimemoryv1.RelatedTermsResponse, error) {
	limit, err := bounded("limit", req.GetLimit(), defaultRelated, maxRelated)
	if err != nil {
		return nil, err
	}
	sample, err := bounded("sample", req.GetSample(), defaultRelatedSet, maxRelatedSet)
	if err != nil {
		return nil, err
	}
	f, err := src.Filter(req.GetFilter())
	if err != nil {
		return nil, err
	}
	if err := record.ValidateQuery("query", req.GetQuery()); err != nil {
		return nil, err
	}
	terms := src.An.Query(req.GetQuery())
	if len(terms) > MaxQueryTerms {
		return nil, &record.FieldError{Field: "query", Rule: fmt.Sprintf("must have at most %d distinct words (got %d)", MaxQueryTerms, len(terms))}
	}
	terms = keyword.DropFunctionWords(terms)
	stats, _ := TermStats(src.An, req.GetQuery(), src.DocFreqs)
	resp := &aimemoryv1.RelatedTermsResponse{Docs: stats.GetDocs()}
	kept := make(map[string]bool, len(terms))
	for _, t := range terms {
		kept[t] = true
	}
	for _, t := range stats.GetTerms() {
		if kept[t.Term] {
			resp.QueryTerms = append(resp.QueryTerms, t)
		}
	}
	hits := src.Idx.Search(index.Query{Terms: terms, Filter: f, LiveAt: src.Now, Limit: sample, Now: src.Now})
	docs, err := src.Records(hits)
	if err != nil {
		return nil, err
	}
	resp.Matched = uint32(len(docs))
	resp.Related = Related(src.An, terms, docs, src.DocFreqs, limit)
	return resp, nil
}

// CallerDocFreqs are idx's document frequencies as grant may see them:
// store-wide for a grant of every namespace, else counted over what it
// may read, so no other tenant's words are counted for it.
func CallerDocFreqs(idx *index.Index, grant authz.Grant) DocFreqs {
	if grant.Everything() {
		return idx.DocFreqs
	}
	return func(terms []string) ([]uint64, int) { return idx.DocFreqsWithin(terms, grant.Reads) }
}

// bounded reads a count whose zero means the default.
func bounded(field string, v uint32, def, hi int) (int, error) {
	if v == 0 {
		return def, nil
	}
	if int(v) > hi {
		return 0, &record.FieldError{Field: field, Rule: fmt.Sprintf("must be at most %d (got %d)", hi, v)}
	}
	return int(v), nil
}
