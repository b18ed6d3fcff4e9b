package index

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// Ranking lives here, in one place: the weights, score and the top-k order
// that search, recall, list and related all use.

// score ranks a memory for a query whose BM25 relevance is bm25:
//
//	relevance × f_priority × f_confidence × f_recency
//	f_priority   = 1 + 0.015·(priority − 5)   0.940 … 1.075
//	f_confidence = 0.96 + 0.04·confidence     0.960 … 1.000
//	f_recency    = 1 + 0.03/(1 + days/30)     1.000 … 1.030, days since updated_at
//
// Relevance first (issue 8, docs/RETRIEVAL.md): the factors span at most
// 1.23×, so they reorder memories of similar relevance and can never lift
// one with clearly weaker term matches (below 0.81 of another's relevance)
// over a stronger one. Usage (access count) and tier are left out: only
// recall touches, and recall promotes, so both echo earlier rankings, and
// any weight on them would make what a question finds depend on the
// questions before it. The additive score of data-model §9.2 did exactly
// that.
// static is staticFactor of the memory, as the index keeps it.
func score(bm25, static float64, d *docInfo, now int64) float64 {
	days := max(0, float64(now-d.updatedAt)/float64(24*time.Hour))
	return bm25 * static * (1 + recencyWeight/(1+days/recencyDays))
}

// Weights of score.
const (
	priorityStep   = 0.015 // per priority point from the default 5
	confidenceBase = 0.96  // f_confidence at confidence 0
	recencyWeight  = 0.03  // f_recency of a memory updated now, minus 1
	recencyDays    = 30.0  // days until half of it is gone
)

// staticFactor is the part of score that depends on the memory alone.
func staticFactor(priority int32, confidence float64) float64 {
	return (1 + priorityStep*float64(int(priority)-record.DefaultPriority)) *
		(confidenceBase + (1-confidenceBase)*confidence)
}

// maxRecency bounds f_recency, with room for rounding, for pruning
// candidates that cannot rank.
const maxRecency = (1 + recencyWeight) * (1 + 1e-6)

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

// RRFK is reciprocal rank fusion's constant (Cormack, Clarke and Büttcher,
// SIGIR 2009): large enough that the first few ranks of one list do not
// drown the other.
const RRFK = 60

// Fuse merges ranked lists by reciprocal rank fusion, each list weighted:
// score = Σ weight / (RRFK + rank), rank from 1. Ties go to the earlier
// list's order, then the smaller id. It keeps the best limit.
func Fuse(lists [][]Hit, weights []float64, limit int) []Hit {
	type acc struct {
		score float64
		first int // best position seen in the first list holding it
		list  int
	}
	byID := map[string]*acc{}
	var order []string
	for li, l := range lists {
		for r, h := range l {
			a := byID[h.ID]
			if a == nil {
				a = &acc{first: r, list: li}
				byID[h.ID] = a
				order = append(order, h.ID)
			}
			a.score += weights[li] / float64(RRFK+r+1)
		}
	}
	out := make([]Hit, len(order))
	for i, id := range order {
		out[i] = Hit{ID: id, Score: byID[id].score}
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		x, y := byID[a.ID], byID[b.ID]
		if x.list != y.list {
			return x.list - y.list
		}
		if x.first != y.first {
			return x.first - y.first
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
