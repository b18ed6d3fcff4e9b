package retrieval

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/internal/embed"
	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
	"github.com/ai-memory/ai-memory/internal/engine/embedder"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
)

// How the local model's figures in docs/RETRIEVAL.md were made: every
// shipped collection scored offline with textbook BM25, the engine's
// keyword ranking (the "+stop" variant, within 0.003 of the engine), the
// model's vectors alone (cosine over the memories stored so far, as the
// engine's brute-force scan), and keyword and vector fused by the
// engine's former reciprocal rank fusion (index.Fuse, keyword top 30,
// vector top 50 above a cosine floor) for several floors and vector
// weights, and by calibrated blends (vecset.Blend's rule and its
// neighbours). Run with the model (AI_MEMORY_MODEL_DIR, or pulled):
//
//	go test ./e2e/retrieval -run TestModelRetrieval -models -v
var models = flag.Bool("models", false, "score vector and hybrid retrieval with the local model")

func TestModelRetrieval(t *testing.T) {
	if !*models {
		t.Skip("run with -models")
	}
	dir := embedtest.ModelDir(t)
	m, err := embed.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notes", "dialogue", "agent"} {
		c, err := Load(Dir, name)
		if err != nil {
			t.Fatal(err)
		}
		docVecs, queryVecs := collectionVectors(t, m, c)
		unread := map[string]float64{}
		for _, q := range c.Queries {
			unread[q.ID] = embedder.UnreadShare(m, q.Text)
		}
		// The keyword top 30 with scores, once (the engine's ranking).
		type kwList struct {
			ids    []string
			scores []float64
			self   float64
		}
		kw := map[string]kwList{}
		keywordOnly := run(c, variant{titleW: 1, tagW: 1, stop: true, fuse: func(q Query, ids []string, scores []float64, self float64) []string {
			kw[q.ID] = kwList{ids, scores, self}
			return ids
		}})
		t.Logf("%-8s %-34s %v", name, "textbook BM25", bm25Scores(c))
		t.Logf("%-8s %-34s %v", name, "keyword (engine)", keywordOnly)
		for _, prec := range []string{"float32", "16-bit", "8-bit"} {
			docs := make([][]float32, len(docVecs))
			for i, v := range docVecs {
				docs[i] = quantized(v, prec)
			}
			pos := map[string]int{}
			for i, d := range c.Docs {
				pos[d.ID] = i
			}
			// ranked is every stored doc of q's namespace by cosine, best first.
			ranked := map[string][]index.Hit{}
			for _, q := range c.Queries {
				var hs []index.Hit
				for i, d := range c.Docs[:q.After] {
					if q.Namespace != "" && d.Namespace != q.Namespace {
						continue
					}
					hs = append(hs, index.Hit{ID: d.ID, Score: float64(dot(queryVecs[q.ID], docs[i]))})
				}
				ranked[q.ID] = vecset.ByScore(hs)
			}
			cosOf := func(q Query, id string) float64 {
				return float64(dot(queryVecs[q.ID], docs[pos[id]]))
			}
			vectorTop := func(q Query, floor float64) []index.Hit {
				var out []index.Hit
				for _, h := range ranked[q.ID] {
					if h.Score < floor || len(out) == 50 {
						break
					}
					out = append(out, h)
				}
				return out
			}
			score := func(label string, f func(q Query) []string) {
				var tl Tally
				for _, q := range c.Queries {
					tl.Add(f(q), c.Qrels[q.ID])
				}
				t.Logf("%-8s %-34s %v", name, prec+" "+label, tl.Mean())
			}
			score("vector", func(q Query) []string { return idsOf(vectorTop(q, -1), 10) })
			for _, floor := range []float64{0.3, 0.4, 0.5} {
				for _, w := range []float64{0.5, 1} {
					score(fmt.Sprintf("rrf floor %.2f w %.1f", floor, w), func(q Query) []string {
						var out []string
						for _, h := range index.Fuse([][]index.Hit{hits(kw[q.ID].ids), vectorTop(q, floor)}, []float64{1, w}, 10) {
							out = append(out, h.ID)
						}
						return out
					})
				}
			}
			if prec != "8-bit" {
				continue
			}
			// The calibrated blend, w = W · (1 − top/weight)^p · (1 − unread)^k
			// (vecset.Blend): k 0 is the rule before the unread share.
			for _, r := range []struct{ w, p, k float64 }{
				{3, 3, 0}, {8, 3, 0}, {20, 3, 0}, {20, 1, 0},
				{3, 3, 8}, {8, 2, 8}, {12, 1.5, 8}, {20, 3, 4}, {20, 3, 8}, {20, 3, 12},
			} {
				score(fmt.Sprintf("blend floor 0.1 W %g p %g k %g", r.w, r.p, r.k), func(q Query) []string {
					k := kw[q.ID]
					wq := r.w * math.Pow(1-unread[q.ID], r.k)
					if len(k.scores) > 0 {
						wq *= math.Pow(max(0, 1-k.scores[0]/k.self), r.p)
					}
					return blend(k.ids, k.scores, k.self, vectorTop(q, 0.1), func(id string) float64 { return cosOf(q, id) }, 0.1, wq)
				})
			}
		}
	}
}

func idsOf(hs []index.Hit, n int) []string {
	var out []string
	for _, h := range hs[:min(n, len(hs))] {
		out = append(out, h.ID)
	}
	return out
}

// blend is the calibrated blend tried against RRF: over the union of the
// keyword and vector candidates, keyword score / the query's own weight +
// w · (cosine − floor)/(1 − floor) where the cosine passes the floor.
func blend(kwIDs []string, kwScores []float64, self float64, vec []index.Hit, cos func(string) float64, floor, w float64) []string {
	sc := map[string]float64{}
	var order []string
	add := func(id string) {
		if _, ok := sc[id]; !ok {
			sc[id] = 0
			order = append(order, id)
		}
	}
	for i, id := range kwIDs {
		add(id)
		sc[id] += kwScores[i] / self
	}
	for _, h := range vec {
		add(h.ID)
	}
	for _, id := range order {
		if c := cos(id); c > floor {
			sc[id] += w * (c - floor) / (1 - floor)
		}
	}
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case sc[a] > sc[b]:
			return -1
		case sc[a] < sc[b]:
			return 1
		}
		return 0
	})
	return order[:min(10, len(order))]
}

// quantized is v as the store would give it back at precision prec.
func quantized(v []float32, prec string) []float32 {
	switch prec {
	case "8-bit":
		scale, q := vecset.Quantize(v)
		return (&vecset.Entry{Scale: scale, Q: q}).Vector()
	case "16-bit":
		var m float32
		for _, x := range v {
			m = max(m, float32(math.Abs(float64(x))))
		}
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(math.Round(float64(x/m*32767))) * m / 32767
		}
		return out
	}
	return v
}

func hits(ids []string) []index.Hit {
	out := make([]index.Hit, len(ids))
	for i, id := range ids {
		out[i] = index.Hit{ID: id}
	}
	return out
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// collectionVectors embeds c's docs (title and content, as the engine
// does) and queries, cached in the temp dir across runs.
func collectionVectors(t testing.TB, m *embed.Model, c *Collection) ([][]float32, map[string][]float32) {
	var texts []string
	for _, d := range c.Docs {
		texts = append(texts, d.Title+" "+d.Content)
	}
	for _, q := range c.Queries {
		texts = append(texts, q.Text)
	}
	cache := filepath.Join(os.TempDir(), fmt.Sprintf("ai-memory-retrieval-%s-%d-%d.f32", c.Name, len(texts), m.Dims()))
	var vs [][]float32
	if data, err := os.ReadFile(cache); err == nil && len(data) == 4*len(texts)*m.Dims() {
		for i := range texts {
			v := make([]float32, m.Dims())
			for j := range v {
				v[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*(i*m.Dims()+j):]))
			}
			vs = append(vs, v)
		}
	} else {
		for i := 0; i < len(texts); i += 64 {
			batch, err := m.Embed(texts[i:min(i+64, len(texts))])
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, batch...)
		}
		var data []byte
		for _, v := range vs {
			for _, x := range v {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
			}
		}
		os.WriteFile(cache, data, 0o644)
	}
	queries := map[string][]float32{}
	for i, q := range c.Queries {
		queries[q.ID] = vs[len(c.Docs)+i]
	}
	return vs[:len(c.Docs)], queries
}
