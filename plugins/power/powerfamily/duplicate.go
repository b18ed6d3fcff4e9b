package powerfamily

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// id (a stored memory, compared with the others) is accepted but not
// advertised: the web console's review of what is already stored uses it;
// agents check before storing.
var duplicateArgs = argNames(duplicateSchema, "id")

// Duplicate detection, with no model: exact Jaccard similarity of word
// 3-shingle sets over title + " " + content, against candidates the
// keyword index finds for the candidate's most telling terms. The index
// plays the part LSH plays for MinHash (finding the few memories worth
// comparing), and comparing the sets themselves gives the Jaccard value
// MinHash would only estimate.
const (
	methodJaccard      = "shingle_jaccard"
	methodEmbedding    = "embedding_cosine"
	jaccardThreshold   = 0.6 // spec §8's example; near-verbatim copies score well above
	duplicateQueryTerm = 24  // the telling terms a candidate search uses
	duplicatePool      = 50  // candidates compared
)

type duplicateReq struct {
	id        string // a stored memory to compare with the others ("" = title and content)
	text      string
	namespace string
	threshold float64
	explicit  bool // the caller set threshold
}

type nearestView struct {
	ID         string  `json:"id"`
	Title      string  `json:"title"`
	Namespace  string  `json:"namespace"`
	Similarity float64 `json:"similarity"`
}

type duplicateResult struct {
	Method string `json:"method"`
	// Why the embedding method was not used although an endpoint is configured.
	Reason            string       `json:"reason,omitempty"`
	IsDuplicate       bool         `json:"is_duplicate"`
	Threshold         float64      `json:"threshold"`
	Nearest           *nearestView `json:"nearest,omitempty"`
	SuggestedMerge    string       `json:"suggested_merge,omitempty"`
	CandidatesScanned int          `json:"candidates_scanned,omitempty"`
}

func parseDuplicate(raw []byte) (*duplicateReq, error) {
	a, err := sdk.ParseArgs(raw, duplicateArgs)
	if err != nil {
		return nil, err
	}
	req := &duplicateReq{}
	if req.id, err = a.Str("id", ""); err != nil {
		return nil, err
	}
	if req.id != "" {
		if err := record.ValidateID("id", req.id); err != nil {
			return nil, err
		}
		for _, k := range []string{"title", "content"} {
			if _, set := a.Value(k); set {
				return nil, sdk.Errorf("%s: give either id (a stored memory) or title and content, not both", k)
			}
		}
	} else {
		title, err := a.Required("title")
		if err != nil {
			return nil, err
		}
		if err := record.ValidateTitle(title); err != nil {
			return nil, err
		}
		content, err := a.Required("content")
		if err != nil {
			return nil, err
		}
		if err := record.ValidateContent(content); err != nil {
			return nil, err
		}
		req.text = title + " " + content
	}
	ns, err := a.NamespaceFilter("namespace")
	if err != nil {
		return nil, err
	}
	th, err := a.Number("threshold", jaccardThreshold)
	if err != nil {
		return nil, err
	}
	if th < 0 || th > 1 {
		return nil, sdk.Errorf("threshold: must be between 0 and 1 (got %g)", th)
	}
	_, req.explicit = a.Value("threshold")
	req.namespace, req.threshold = ns, th
	return req, nil
}

func (s *service) checkDuplicate(ctx context.Context, call sdk.Call) (any, error) {
	req, err := parseDuplicate(call.Arguments)
	if err != nil {
		return nil, err
	}
	if req.id != "" {
		m, err := s.memoryByID(ctx, "id", req.id)
		if err != nil {
			return nil, err
		}
		req.id, req.text = m.GetId(), m.GetTitle()+" "+m.GetContent()
	}
	res, err := s.duplicateByEmbedding(ctx, req)
	if err != nil || res.Method != "" {
		return res, err
	}
	query, err := s.tellingQuery(ctx, req.text, duplicateQueryTerm)
	if err != nil {
		return nil, err
	}
	res.Method, res.Threshold = methodJaccard, req.threshold
	if query == "" {
		return res, nil
	}
	found, err := s.eng.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{
		Query: query, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL,
		Filter: &aimemoryv1.Filter{Namespace: req.namespace}, Limit: duplicatePool + 1, // one more: req.id's own
	})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	mine := shingles(req.text)
	best := -1.0
	for _, r := range found.GetResults() {
		m := r.GetMemory() // the filter's namespace is exact: no descendants
		if m.GetId() == req.id || res.CandidatesScanned == duplicatePool {
			continue
		}
		res.CandidatesScanned++
		sim := jaccard(mine, shingles(m.GetTitle()+" "+m.GetContent()))
		if sim > best { // ties: the better keyword match, seen first, wins
			best = sim
			res.Nearest = &nearestView{ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace(), Similarity: math.Round(sim*1000) / 1000}
		}
	}
	if res.Nearest != nil && best >= req.threshold {
		res.IsDuplicate, res.SuggestedMerge = true, res.Nearest.ID
	}
	return res, nil
}

// duplicateByEmbedding is the embedding-cosine answer when the data dir
// has an embedder that answers and vectors to compare with; otherwise a
// result with no method yet, carrying the reason when one applies.
func (s *service) duplicateByEmbedding(ctx context.Context, req *duplicateReq) (*duplicateResult, error) {
	near, err := s.eng.NearestByText(ctx, &aimemoryv1.NearestByTextRequest{
		Text: req.text, Filter: &aimemoryv1.Filter{Namespace: req.namespace}, Limit: 2, // two: one may be req.id's own
	})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	results := slices.DeleteFunc(near.GetResults(), func(r *aimemoryv1.ScoredMemory) bool { return r.GetMemory().GetId() == req.id })
	if !near.GetConfigured() || len(results) == 0 {
		return &duplicateResult{Reason: near.GetReason()}, nil
	}
	th := near.GetDuplicateThreshold()
	if req.explicit {
		th = req.threshold
	}
	m, sim := results[0].GetMemory(), results[0].GetScore()
	res := &duplicateResult{Method: methodEmbedding, Threshold: th,
		Nearest: &nearestView{ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace(), Similarity: math.Round(sim*1000) / 1000}}
	if sim >= th {
		res.IsDuplicate, res.SuggestedMerge = true, m.GetId()
	}
	return res, nil
}

// tellingQuery is a keyword query of text's n most telling terms (highest
// count × inverse document frequency, function words left out), spelled as
// the words they came from, so the engine analyses them back to the same
// terms. "" when text has no such term.
func (s *service) tellingQuery(ctx context.Context, text string, n int) (string, error) {
	terms, _, err := s.keyTerms(ctx, text, false)
	if err != nil {
		return "", err
	}
	if len(terms) > n {
		terms = terms[:n]
	}
	ws := make([]string, len(terms))
	for i, t := range terms {
		ws[i] = t.word
	}
	return strings.Join(ws, " "), nil
}

// keyTerm is a term of a text with its tf-idf weight.
type keyTerm struct {
	term, word string
	df         uint64
	weight     float64
}

// keyTerms is text's content terms, heaviest first, the number of memories
// indexed and, with tags, the existing tags the text spells out.
func (s *service) keyTerms(ctx context.Context, text string, tags bool) ([]keyTerm, *aimemoryv1.TermStatsResponse, error) {
	st, err := s.eng.TermStats(ctx, &aimemoryv1.TermStatsRequest{Text: text, Tags: tags})
	if err != nil {
		return nil, nil, sdk.EngineError(err)
	}
	n := float64(st.GetDocs())
	var out []keyTerm
	for _, t := range st.GetTerms() {
		if t.GetFunctionWord() {
			continue
		}
		idf := math.Log(1 + (n+1)/(float64(t.GetDf())+0.5))
		out = append(out, keyTerm{term: t.GetTerm(), word: t.GetWord(), df: t.GetDf(), weight: float64(t.GetCount()) * idf})
	}
	slices.SortStableFunc(out, func(a, b keyTerm) int {
		switch {
		case a.weight > b.weight:
			return -1
		case a.weight < b.weight:
			return 1
		}
		return 0
	})
	return out, st, nil
}
