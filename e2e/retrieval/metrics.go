package retrieval

import (
	"fmt"
	"math"
	"slices"
)

// Scores are the mean measures of one ranker over the judged queries.
type Scores struct {
	Queries  int     // queries with at least one relevant doc
	Recall5  float64 // |relevant ∩ top 5| / |relevant|
	Recall10 float64
	NDCG10   float64 // gain 2^grade − 1, discount log2(rank + 1)
	Success5 float64 // at least one relevant doc in the top 5
}

// Tally accumulates per-query measures.
type Tally struct{ sum Scores }

// Add scores one ranking against a query's judgements (doc id → grade);
// a query with no relevant doc is not counted.
func (t *Tally) Add(ranked []string, judged map[string]int) {
	relevant := 0
	var grades []int
	for _, g := range judged {
		if g > 0 {
			relevant++
			grades = append(grades, g)
		}
	}
	if relevant == 0 {
		return
	}
	hits := func(k int) int {
		n := 0
		for _, id := range ranked[:min(k, len(ranked))] {
			if judged[id] > 0 {
				n++
			}
		}
		return n
	}
	t.sum.Queries++
	t.sum.Recall5 += float64(hits(5)) / float64(relevant)
	t.sum.Recall10 += float64(hits(10)) / float64(relevant)
	if hits(5) > 0 {
		t.sum.Success5++
	}
	dcg := 0.0
	for i, id := range ranked[:min(10, len(ranked))] {
		dcg += gain(judged[id]) / math.Log2(float64(i+2))
	}
	slices.SortFunc(grades, func(a, b int) int { return b - a })
	ideal := 0.0
	for i, g := range grades[:min(10, len(grades))] {
		ideal += gain(g) / math.Log2(float64(i+2))
	}
	t.sum.NDCG10 += dcg / ideal
}

func gain(grade int) float64 { return math.Exp2(float64(grade)) - 1 }

// Mean returns the averages.
func (t *Tally) Mean() Scores {
	s := t.sum
	if n := float64(s.Queries); n > 0 {
		s.Recall5 /= n
		s.Recall10 /= n
		s.NDCG10 /= n
		s.Success5 /= n
	}
	return s
}

func (s Scores) String() string {
	return fmt.Sprintf("recall@5 %.3f  recall@10 %.3f  nDCG@10 %.3f  success@5 %.3f  (%d queries)",
		s.Recall5, s.Recall10, s.NDCG10, s.Success5, s.Queries)
}
