package retrieval

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// BM25 is a textbook Okapi BM25 ranker, written apart from the engine so
// the benchmark has an independent baseline: words are lowercased runs of
// letters and digits, with no stemming and no stop words; title, content
// and tags are one bag of words; k1 = 1.2, b = 0.75, and the IDF is
// log(1 + (N − df + 0.5)/(df + 0.5)), which never goes negative. A query
// matches a doc holding any of its words.
type BM25 struct {
	docs   []Doc
	tf     []map[string]int
	length []int
	df     map[string]int
	total  int
}

// NewBM25 returns an empty index; Add docs in store order.
func NewBM25() *BM25 { return &BM25{df: map[string]int{}} }

// Add indexes d.
func (x *BM25) Add(d Doc) {
	words := Words(d.Title + " " + d.Content + " " + strings.Join(d.Tags, " "))
	tf := map[string]int{}
	for _, w := range words {
		tf[w]++
	}
	for w := range tf {
		x.df[w]++
	}
	x.docs = append(x.docs, d)
	x.tf = append(x.tf, tf)
	x.length = append(x.length, len(words))
	x.total += len(words)
}

// Len is the number of docs indexed.
func (x *BM25) Len() int { return len(x.docs) }

// Search returns the ids of the best limit docs of namespace (all if ""),
// best first; ties keep store order.
func (x *BM25) Search(query, namespace string, limit int) []string {
	const k1, b = 1.2, 0.75
	n := float64(len(x.docs))
	if n == 0 {
		return nil
	}
	avg := float64(x.total) / n
	terms := Words(query)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	type scored struct {
		i     int
		score float64
	}
	var hits []scored
	for i, tf := range x.tf {
		if namespace != "" && x.docs[i].Namespace != namespace {
			continue
		}
		s := 0.0
		for _, t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(x.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(x.length[i])/avg))
		}
		if s > 0 {
			hits = append(hits, scored{i, s})
		}
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
	var out []string
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, x.docs[h.i].ID)
	}
	return out
}

// Words splits text into lowercased runs of letters and digits.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
