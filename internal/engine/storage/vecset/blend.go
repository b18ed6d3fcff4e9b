package vecset

import (
	"math"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/index"
)

// Hybrid recall is a calibrated blend of keyword and vector evidence
// (docs/RETRIEVAL.md "Hybrid recall"), chosen over reciprocal rank fusion
// on the three benchmark collections with the local model: RRF ranks a
// keyword match of one common word like a strong one, so it either
// drowns the vectors (agent collection) or lets them displace good
// keyword matches (notes). Here each candidate of either list scores
//
//	keyword score / the query's weight  +  w · max(0, cos − floor)/(1 − floor)
//
// with w = BlendWeight · (1 − min(1, best keyword score / query weight))³
// · (1 − unread)⁸: when the best keyword match holds the whole query the
// vectors step aside, and when keyword matching found little they decide;
// unread is the share of the query's content words the model has no
// vocabulary entry for (names, identifiers), whose meaning its vector
// cannot carry, so the words decide those. floor is the model's
// min_similarity. When unread is not known (an endpoint's model) the
// rule is the one measured before it: weight 3 and no unread factor.
const (
	BlendWeight   = 20.0
	blendPower    = 3
	unreadPower   = 8
	unknownWeight = 3.0
)

// Blend ranks the union of the keyword hits kw (scores as index.Search
// gives them, for a query of weight index.QueryWeight) and the vector
// hits near (score: cosine ≥ floor) by the blend above, best first, the
// first limit. A keyword candidate's cosine is read from s. unread is
// the query's unread share, negative when not known (an endpoint's model).
func (s *Set) Blend(kw []index.Hit, weight float64, near []index.Hit, q []float32, model string, floor, unread float64, limit int) []index.Hit {
	if weight <= 0 {
		weight = 1
	}
	w := BlendWeight * math.Pow(1-min(1, unread), unreadPower)
	if unread < 0 {
		w = unknownWeight
	}
	if len(kw) > 0 {
		w *= math.Pow(max(0, 1-kw[0].Score/weight), blendPower)
	}
	cos := map[string]float64{}
	for _, h := range near {
		cos[h.ID] = h.Score
	}
	qq := quantizeQuery(q)
	s.mu.RLock()
	for _, h := range kw {
		if _, ok := cos[h.ID]; ok {
			continue
		}
		if i, ok := s.pos[h.ID]; ok && s.es[i].Model == model && len(s.es[i].Q) == len(qq.q) {
			cos[h.ID] = qq.cos(s.es[i])
		}
	}
	s.mu.RUnlock()
	vector := func(id string) float64 {
		if c, ok := cos[id]; ok && c > floor {
			return w * (c - floor) / (1 - floor)
		}
		return 0
	}
	out := make([]index.Hit, 0, len(kw)+len(near))
	seen := map[string]bool{}
	for _, h := range kw {
		seen[h.ID] = true
		out = append(out, index.Hit{ID: h.ID, Score: h.Score/weight + vector(h.ID)})
	}
	for _, h := range near {
		if !seen[h.ID] {
			out = append(out, index.Hit{ID: h.ID, Score: vector(h.ID)})
		}
	}
	// Stable: equal scores keep keyword order, then vector order.
	slices.SortStableFunc(out, func(a, b index.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out[:min(limit, len(out))]
}
