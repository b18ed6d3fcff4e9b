package retrieval

import (
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/internal/embed"
	"github.com/ai-memory/ai-memory/internal/embed/embedtest"
	"github.com/ai-memory/ai-memory/internal/engine/embedder"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"
)

// BenchmarkModelRetrieval reports, offline, recall@5, recall@10 and
// nDCG@10 on every collection of textbook BM25 (bm25-), the engine's
// keyword ranking without priors (keyword-), the local model's vectors
// alone, stored 8-bit (vector-), and the engine's hybrid blend of the two
// (hybrid-, vecset.Blend at the local model's floor, with each query's
// unread share as the engine computes it). The same figures
// over MCP, with priors, are e2e's BenchmarkRetrieval. Needs the model
// (skipped without; fails in CI).
func BenchmarkModelRetrieval(b *testing.B) {
	m, err := embed.Load(embedtest.ModelDir(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"notes", "dialogue", "agent"} {
		b.Run(name, func(b *testing.B) {
			c, err := Load(Dir, name)
			if err != nil {
				b.Fatal(err)
			}
			docVecs, queryVecs := collectionVectors(b, m, c) // embedded once, cached
			unread := map[string]float64{}
			for _, q := range c.Queries {
				unread[q.ID] = embedder.UnreadShare(m, q.Text)
			}
			var scores map[string]Scores
			for b.Loop() {
				scores = modelScores(c, docVecs, queryVecs, unread)
			}
			for _, mode := range []string{"bm25", "keyword", "vector", "hybrid"} {
				s := scores[mode]
				b.Logf("%-8s %v", mode, s)
				b.ReportMetric(s.Recall5, mode+"-recall@5")
				b.ReportMetric(s.Recall10, mode+"-recall@10")
				b.ReportMetric(s.NDCG10, mode+"-nDCG@10")
			}
		})
	}
}

// modelScores scores c's questions, each over the memories stored before
// it was asked, by the four rankers of BenchmarkModelRetrieval; unread is
// each question's embedder.UnreadShare.
func modelScores(c *Collection, docVecs [][]float32, queryVecs map[string][]float32, unread map[string]float64) map[string]Scores {
	set := vecset.New()
	for i, d := range c.Docs {
		scale, q := vecset.Quantize(docVecs[i])
		set.Put(d.ID, &vecset.Entry{Model: "m", Scale: scale, Q: q})
	}
	floor := embedder.LocalMinSimilarity
	var vec, hyb Tally
	keyword := run(c, variant{titleW: 1, tagW: 1, stop: true, fuse: func(q Query, ids []string, scores []float64, weight float64) []string {
		var near []index.Hit
		for _, d := range c.Docs[:q.After] {
			if q.Namespace != "" && d.Namespace != q.Namespace {
				continue
			}
			near = append(near, index.Hit{ID: d.ID, Score: float64(dot(queryVecs[q.ID], set.Get(d.ID).Vector()))})
		}
		near = vecset.ByScore(near)
		var top []string
		for _, h := range near[:min(10, len(near))] {
			top = append(top, h.ID)
		}
		vec.Add(top, c.Qrels[q.ID])
		cut := slices.IndexFunc(near, func(h index.Hit) bool { return h.Score < floor })
		if cut < 0 {
			cut = len(near)
		}
		near = near[:min(cut, 50)]
		kw := make([]index.Hit, len(ids))
		for i, id := range ids {
			kw[i] = index.Hit{ID: id, Score: scores[i]}
		}
		var fused []string
		for _, h := range set.Blend(kw, weight, near, queryVecs[q.ID], "m", floor, unread[q.ID], 10) {
			fused = append(fused, h.ID)
		}
		hyb.Add(fused, c.Qrels[q.ID])
		return ids
	}})
	return map[string]Scores{"bm25": bm25Scores(c), "keyword": keyword, "vector": vec.Mean(), "hybrid": hyb.Mean()}
}

// bm25Scores is textbook BM25's, each question over the memories stored
// before it was asked.
func bm25Scores(c *Collection) Scores {
	var bm Tally
	x := NewBM25()
	queries := slices.Clone(c.Queries)
	slices.SortStableFunc(queries, func(a, b Query) int { return a.After - b.After })
	next := 0
	for i := 0; i <= len(c.Docs); i++ {
		for ; next < len(queries) && queries[next].After <= i; next++ {
			q := queries[next]
			bm.Add(x.Search(q.Text, q.Namespace, 10), c.Qrels[q.ID])
		}
		if i < len(c.Docs) {
			x.Add(c.Docs[i])
		}
	}
	return bm.Mean()
}
