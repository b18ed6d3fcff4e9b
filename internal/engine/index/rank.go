package index

import (
	"container/heap"
	"time"
)

// Ranking lives here, in one place: the weights, score and the top-k order
// that search, recall, list and related all use.

// Ranking weights of data-model §9.2.
const (
	weightPriority   = 0.5
	weightAccess     = 0.1
	accessCap        = 50
	weightConfidence = 2.0
	recencyPerDay    = 0.1
)

// tierBonus applies to recall only: short 0, mid 1, long 3.
func tierBonus(rank int8) float64 {
	switch rank {
	case 1:
		return 1
	case 2:
		return 3
	}
	return 0
}

// score is a memory's rank for a query whose BM25 relevance is bm25:
// relevance + 0.5·priority + 0.1·min(access,50) + 2·confidence
// (+ tier bonus for recall) + 1/(1 + 0.1·days since updated).
func score(bm25 float64, d *docInfo, recall bool, now int64) float64 {
	s := bm25 + staticScore(d)
	if recall {
		s += tierBonus(d.tier)
	}
	days := max(0, float64(now-d.updatedAt)/float64(24*time.Hour))
	return s + 1/(1+recencyPerDay*days)
}

// staticScore is the part of score that depends on the memory alone.
func staticScore(d *docInfo) float64 {
	return weightPriority*float64(d.priority) +
		weightAccess*float64(min(d.access, accessCap)) +
		weightConfidence*d.confidence
}

// maxDynamic bounds what score adds to bm25 + staticScore (tier bonus and
// recency), with room for float32 rounding of the stored static part.
const maxDynamic = 3 + 1 + 1e-3

// Hit is a ranked candidate. Higher key wins; ties fall to the newer
// updated_at, then the smaller id, so every order is deterministic.
type Hit struct {
	ID        string
	UpdatedAt int64
	key       float64 // score, or priority for list order
	Score     float64
}

func better(a, b Hit) bool {
	if a.key != b.key {
		return a.key > b.key
	}
	if a.UpdatedAt != b.UpdatedAt {
		return a.UpdatedAt > b.UpdatedAt
	}
	return a.ID < b.ID
}

// topK keeps the best k hits seen; the worst kept one sits at the root.
type topK struct {
	k    int
	hits []Hit
}

func (t *topK) Len() int           { return len(t.hits) }
func (t *topK) Less(i, j int) bool { return better(t.hits[j], t.hits[i]) }
func (t *topK) Swap(i, j int)      { t.hits[i], t.hits[j] = t.hits[j], t.hits[i] }
func (t *topK) Push(x any)         { t.hits = append(t.hits, x.(Hit)) }
func (t *topK) Pop() any {
	h := t.hits[len(t.hits)-1]
	t.hits = t.hits[:len(t.hits)-1]
	return h
}

// full reports whether the heap holds k hits already.
func (t *topK) full() bool { return t.k > 0 && len(t.hits) >= t.k }

// worst is the key a new hit must reach to enter a full heap.
func (t *topK) worst() float64 { return t.hits[0].key }

// offer considers d with its ranking key and reported score.
func (t *topK) offer(d *docInfo, key, score float64) {
	switch {
	case t.k <= 0:
	case len(t.hits) < t.k:
		heap.Push(t, Hit{ID: d.id, UpdatedAt: d.updatedAt, key: key, Score: score})
	case key >= t.hits[0].key:
		h := Hit{ID: d.id, UpdatedAt: d.updatedAt, key: key, Score: score}
		if better(h, t.hits[0]) {
			t.hits[0] = h
			heap.Fix(t, 0)
		}
	}
}

// sorted returns the kept hits, best first.
func (t *topK) sorted() []Hit {
	out := make([]Hit, len(t.hits))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(t).(Hit)
	}
	return out
}
