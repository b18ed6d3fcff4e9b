// Package termstats computes the keyword statistics of the Corpus API from
// what a backend's keyword index knows (document frequencies, the memories
// matching a query): term statistics of a text, and terms associated with
// a query by co-occurrence. It holds no state; backends call it.
package termstats

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// DocFreqs returns each term's document frequency and the number of
// memories indexed.
type DocFreqs func(terms []string) ([]uint64, int)

// wordCounts tracks, per term, how often each word gave it.
type wordCounts map[string]map[string]uint32

func (w wordCounts) add(word, term string) {
	m := w[term]
	if m == nil {
		m = map[string]uint32{}
		w[term] = m
	}
	m[word]++
}

// best is the commonest word of term; ties go to the shorter, then the
// alphabetically first, so answers are deterministic.
func (w wordCounts) best(term string) string {
	var out string
	var n uint32
	for word, c := range w[term] {
		if c > n || (c == n && (len(word) < len(out) || (len(word) == len(out) && word < out))) {
			out, n = word, c
		}
	}
	return out
}

// TermStats is the distinct terms of text in first-seen order with their
// count in text and document frequency.
func TermStats(an *keyword.Analyzer, text string, df DocFreqs) (*aimemoryv1.TermStatsResponse, map[string]bool) {
	words := wordCounts{}
	var order []string
	counts := map[string]uint32{}
	an.Words(text, func(word, term string) {
		if counts[term] == 0 {
			order = append(order, term)
		}
		counts[term]++
		words.add(word, term)
	})
	dfs, n := df(order)
	resp := &aimemoryv1.TermStatsResponse{Docs: uint64(n), Terms: make([]*aimemoryv1.TermStat, len(order))}
	seen := make(map[string]bool, len(order))
	for i, t := range order {
		seen[t] = true
		resp.Terms[i] = &aimemoryv1.TermStat{Term: t, Word: words.best(t), Count: counts[t], Df: dfs[i], FunctionWord: keyword.IsFunctionWord(t)}
	}
	return resp, seen
}

// MatchingTags is the tags (with their counts) whose every term is in
// terms, most used first, then by name.
func MatchingTags(an *keyword.Analyzer, tags map[string]uint64, terms map[string]bool) []*aimemoryv1.TagCount {
	var out []*aimemoryv1.TagCount
	for tag, n := range tags {
		ts := an.Terms(nil, tag)
		if len(ts) == 0 {
			continue
		}
		all := true
		for _, t := range ts {
			all = all && terms[t]
		}
		if all {
			out = append(out, &aimemoryv1.TagCount{Tag: tag, Count: n})
		}
	}
	slices.SortFunc(out, func(a, b *aimemoryv1.TagCount) int {
		if a.Count != b.Count {
			return int(b.Count) - int(a.Count)
		}
		return strings.Compare(a.Tag, b.Tag)
	})
	return out
}

// Related mines the memories that matched a query (best first) for the
// terms that co-occur with it. A term's score is its support in the
// matched set times its pointwise mutual information with it:
//
//	score = c · log( (c / k) / (df / n) )
//
// c: matched memories holding the term, k: memories matched, df and n:
// over the whole index. PMI alone prefers terms seen once anywhere; the
// support factor keeps the terms that recur across the matched set.
// Query terms, function words, terms of one character or digits only, and
// terms seen in a single matched memory (when more than one matched) are
// left out.
func Related(an *keyword.Analyzer, query []string, docs []*aimemoryv1.Memory, df DocFreqs, limit int) []*aimemoryv1.TermStat {
	inQuery := make(map[string]bool, len(query))
	for _, t := range query {
		inQuery[t] = true
	}
	words := wordCounts{}
	support := map[string]uint32{}
	for _, m := range docs {
		seen := map[string]bool{}
		visit := func(word, term string) {
			if inQuery[term] || keyword.IsFunctionWord(term) || !telling(word) {
				return
			}
			words.add(word, term)
			if !seen[term] {
				seen[term] = true
				support[term]++
			}
		}
		an.Words(m.GetTitle(), visit)
		an.Words(m.GetContent(), visit)
		for _, tag := range m.GetTags() {
			an.Words(tag, visit)
		}
	}
	minSupport := uint32(1)
	if len(docs) > 1 {
		minSupport = 2
	}
	var terms []string
	for t, c := range support {
		if c >= minSupport {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	dfs, n := df(terms)
	k := float64(len(docs))
	out := make([]*aimemoryv1.TermStat, 0, len(terms))
	for i, t := range terms {
		c := float64(support[t])
		d := float64(max(dfs[i], uint64(support[t]))) // never below what was just seen
		score := c * math.Log((c/k)/(d/float64(max(n, 1))))
		if score <= 0 {
			continue // no more frequent among the matches than anywhere
		}
		out = append(out, &aimemoryv1.TermStat{Term: t, Word: words.best(t), Count: support[t], Df: dfs[i], Score: math.Round(score*1000) / 1000})
	}
	slices.SortStableFunc(out, func(a, b *aimemoryv1.TermStat) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.Term, b.Term)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// telling: a word of two or more characters that is not just digits.
func telling(word string) bool {
	if len(word) < 2 {
		return false
	}
	for _, r := range word {
		if !unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
