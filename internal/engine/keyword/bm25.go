package keyword

import "math"

// BM25 parameters (Robertson/Spärck Jones defaults, as in SQLite FTS5).
const (
	K1 = 1.2
	B  = 0.75
)

// IDF is the inverse document frequency of a term found in df of n
// documents. This form (Lucene's) is never negative, so a very common word
// still adds a little relevance instead of subtracting it.
func IDF(df, n int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// TermScore is one term's BM25 contribution to a document of length docLen
// in which the term occurs tf times; avgLen is the mean document length.
func TermScore(idf float64, tf, docLen uint32, avgLen float64) float64 {
	if avgLen <= 0 {
		avgLen = 1
	}
	f := float64(tf)
	return idf * f * (K1 + 1) / (f + K1*(1-B+B*float64(docLen)/avgLen))
}
