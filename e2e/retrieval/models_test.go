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
	"github.com/ai-memory/ai-memory/internal/engine/index"
)

// How the local model's figures in docs/RETRIEVAL.md were made: every
// shipped collection scored offline with textbook BM25, the engine's
// keyword ranking (the "+stop" variant, within 0.003 of the engine), the
// model's vectors alone (cosine over the memories stored so far, as the
// engine's brute-force scan), and keyword and vector fused by the
// engine's reciprocal rank fusion (index.Fuse, keyword top 30, vector top
// 50 above a cosine floor) for several floors and vector weights. Run
// with the model (AI_MEMORY_MODEL_DIR, or pulled):
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
		pos := map[string]int{}
		for i, d := range c.Docs {
			pos[d.ID] = i
		}
		// vectorTop is the best 50 stored docs above floor by cosine.
		vectorTop := func(q Query, floor float32) []string {
			type hit struct {
				id  string
				cos float32
			}
			var hits []hit
			for i, d := range c.Docs[:q.After] {
				if q.Namespace != "" && d.Namespace != q.Namespace {
					continue
				}
				if cos := dot(queryVecs[q.ID], docVecs[i]); cos >= floor {
					hits = append(hits, hit{d.ID, cos})
				}
			}
			slices.SortStableFunc(hits, func(a, b hit) int {
				switch {
				case a.cos > b.cos:
					return -1
				case a.cos < b.cos:
					return 1
				}
				return 0
			})
			ids := make([]string, 0, 50)
			for _, h := range hits[:min(50, len(hits))] {
				ids = append(ids, h.id)
			}
			return ids
		}
		var bm, vec Tally
		x := NewBM25()
		next := 0
		queries := slices.Clone(c.Queries)
		slices.SortStableFunc(queries, func(a, b Query) int { return a.After - b.After })
		for i := 0; i <= len(c.Docs); i++ {
			for ; next < len(queries) && queries[next].After <= i; next++ {
				q := queries[next]
				bm.Add(x.Search(q.Text, q.Namespace, 10), c.Qrels[q.ID])
				v := vectorTop(q, -1)
				vec.Add(v[:min(10, len(v))], c.Qrels[q.ID])
			}
			if i < len(c.Docs) {
				x.Add(c.Docs[i])
			}
		}
		t.Logf("%-8s %-24s %v", name, "textbook BM25", bm.Mean())
		t.Logf("%-8s %-24s %v", name, "keyword (engine)", run(c, variant{titleW: 1, tagW: 1, stop: true}))
		t.Logf("%-8s %-24s %v", name, "vector", vec.Mean())
		for _, floor := range []float32{0.2, 0.25, 0.3, 0.35, 0.4, 0.5} {
			for _, w := range []float64{0.5, 1} {
				fused := variant{titleW: 1, tagW: 1, stop: true, fuse: func(q Query, kw []string) []string {
					lists := [][]index.Hit{hits(kw), hits(vectorTop(q, floor))}
					var out []string
					for _, h := range index.Fuse(lists, []float64{1, w}, 10) {
						out = append(out, h.ID)
					}
					return out
				}}
				t.Logf("%-8s %-24s %v", name, fmt.Sprintf("hybrid floor %.2f w %.1f", floor, w), run(c, fused))
			}
		}
	}
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
func collectionVectors(t *testing.T, m *embed.Model, c *Collection) ([][]float32, map[string][]float32) {
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
