package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/e2e/retrieval"
)

// retrievalRun is what one pass over a collection measured.
type retrievalRun struct {
	ours, bm25 retrieval.Scores
}

// runRetrieval stores c through memory_store and asks its queries through
// memory_recall (limit 10, every recall's side effects included), each
// once the docs it follows are stored, exactly as an agent would over
// MCP. Each ranking is scored next to textbook BM25's over the same docs.
func runRetrieval(t testing.TB, c *retrieval.Collection) retrievalRun {
	t.Helper()
	return runRetrievalIn(t, newEnv(t), c, nil)
}

// runRetrievalIn is runRetrieval in e, calling settle (if any) before each
// group of questions.
func runRetrievalIn(t testing.TB, e *env, c *retrieval.Collection, settle func()) retrievalRun {
	t.Helper()
	s := e.startRaw()
	baseline := retrieval.NewBM25()
	docOf := map[string]string{} // memory id → doc id
	var ours, bm25 retrieval.Tally
	queries := slices.Clone(c.Queries)
	slices.SortStableFunc(queries, func(a, b retrieval.Query) int { return a.After - b.After })
	next := 0
	ask := func() {
		if settle != nil && next < len(queries) && queries[next].After <= baseline.Len() {
			settle()
		}
		for ; next < len(queries) && queries[next].After <= baseline.Len(); next++ {
			q := queries[next]
			var res struct {
				Memories []struct {
					ID string `json:"id"`
				} `json:"memories"`
			}
			args := map[string]any{"context": q.Text, "limit": 10, "format": "json"}
			if q.Namespace != "" {
				args["namespace"] = q.Namespace
			}
			callJSON(t, s, "memory_recall", args, &res)
			var ranked []string
			for _, m := range res.Memories {
				ranked = append(ranked, docOf[m.ID])
			}
			ours.Add(ranked, c.Qrels[q.ID])
			bm25.Add(baseline.Search(q.Text, q.Namespace, 10), c.Qrels[q.ID])
		}
	}
	for _, d := range c.Docs {
		ask()
		args := map[string]any{"title": d.Title, "content": d.Content, "namespace": d.Namespace}
		if len(d.Tags) > 0 {
			args["tags"] = d.Tags
		}
		if d.Priority != 0 {
			args["priority"] = d.Priority
		}
		if d.Tier != "" {
			args["tier"] = d.Tier
		}
		if d.Confidence != nil {
			args["confidence"] = *d.Confidence
		}
		var stored struct {
			ID string `json:"id"`
		}
		args["format"] = "json" // the full id, as json results show it
		callJSON(t, s, "memory_store", args, &stored)
		docOf[stored.ID] = d.ID
		baseline.Add(d)
	}
	ask()
	return retrievalRun{ours: ours.Mean(), bm25: bm25.Mean()}
}

// callJSON runs a tool that must succeed and decodes its JSON result.
func callJSON(t testing.TB, s *rawSession, tool string, args map[string]any, out any) {
	t.Helper()
	resp := s.request("tools/call", map[string]any{"name": tool, "arguments": args})
	text, isErr := toolResult(resp)
	if isErr || text == "" {
		t.Fatalf("%s %v: %v", tool, args, resp)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, text)
	}
}

func loadCollection(t testing.TB, name string) *retrieval.Collection {
	t.Helper()
	c, err := retrieval.Load(filepath.Join(repoRoot(), "e2e", "retrieval", retrieval.Dir), name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// retrievalSubsets are the parts of the shipped collections make test runs:
// the first 400 notes stored (with every question; those left with no
// relevant note are not scored) and the first two conversations.
func retrievalSubsets(t testing.TB) []*retrieval.Collection {
	notes := loadCollection(t, "notes").Subset(
		func(i int, _ retrieval.Doc) bool { return i < 400 },
		func(retrieval.Query) bool { return true })
	conv := func(ns string) bool { return ns == "conv1" || ns == "conv2" }
	dialogue := loadCollection(t, "dialogue").Subset(
		func(_ int, d retrieval.Doc) bool { return conv(d.Namespace) },
		func(q retrieval.Query) bool { return conv(q.Namespace) })
	return []*retrieval.Collection{notes, dialogue}
}

// TestRetrievalNotWorseThanBM25 asserts only what holds whatever the
// numbers are: memory_recall finds at least as much in its first 10 as
// textbook BM25 does on the same docs in the same run.
func TestRetrievalNotWorseThanBM25(t *testing.T) {
	for _, c := range retrievalSubsets(t) {
		t.Run(c.Name, func(t *testing.T) {
			r := runRetrieval(t, c)
			t.Logf("ours: %v", r.ours)
			t.Logf("bm25: %v", r.bm25)
			if r.ours.Recall10 < r.bm25.Recall10 {
				t.Errorf("recall@10 %.3f, below textbook BM25's %.3f", r.ours.Recall10, r.bm25.Recall10)
			}
		})
	}
}

// hybridRetrieval runs c with the deterministic test embedder configured,
// every memory embedded before each group of questions (`ai-memory
// reindex` catches up whatever the background embedding has not done).
func hybridRetrieval(t testing.TB, c *retrieval.Collection) retrievalRun {
	t.Helper()
	o := newOpenAI(t, 256)
	e := newEnv(t)
	e.writeConfig(embeddingsConfig(o, "5s"))
	return runRetrievalIn(t, e, c, func() {
		if out, code := e.cli("reindex", "--quiet", "--batch", "256"); code != 0 {
			t.Fatalf("reindex: %s", out)
		}
	})
}

// TestHybridRetrievalNotWorseThanKeyword asserts only that fusing vector
// candidates into recall never finds less in the first 10 than keyword
// recall alone, on the make test subsets, with the test embedder.
func TestHybridRetrievalNotWorseThanKeyword(t *testing.T) {
	for _, c := range retrievalSubsets(t) {
		t.Run(c.Name, func(t *testing.T) {
			kw := runRetrieval(t, c)
			hy := hybridRetrieval(t, c)
			t.Logf("keyword: %v", kw.ours)
			t.Logf("hybrid:  %v", hy.ours)
			if hy.ours.Recall10 < kw.ours.Recall10 {
				t.Errorf("hybrid recall@10 %.3f, below keyword's %.3f", hy.ours.Recall10, kw.ours.Recall10)
			}
		})
	}
}

// BenchmarkRetrieval reports recall@5, recall@10 and nDCG@10 of
// memory_recall over MCP on the whole shipped collections, beside
// textbook BM25's in the same run (bm25-* metrics): keyword recall, and
// hybrid recall with the local embedding model (skipped without it), every
// memory embedded before each group of questions.
func BenchmarkRetrieval(b *testing.B) {
	for _, name := range []string{"notes", "dialogue", "agent"} {
		for _, mode := range []string{"keyword", "local-model"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				c := loadCollection(b, name)
				var r retrievalRun
				for b.Loop() {
					if mode == "keyword" {
						r = runRetrieval(b, c)
						continue
					}
					e := newEnv(b)
					e.withModel(b)
					r = runRetrievalIn(b, e, c, func() {
						if out, code := e.cli("reindex", "--quiet", "--batch", "64"); code != 0 {
							b.Fatalf("reindex: %s", out)
						}
					})
				}
				b.Logf("ours: %v", r.ours)
				b.Logf("bm25: %v", r.bm25)
				for _, m := range []struct {
					name string
					s    retrieval.Scores
				}{{"", r.ours}, {"bm25-", r.bm25}} {
					b.ReportMetric(m.s.Recall5, m.name+"recall@5")
					b.ReportMetric(m.s.Recall10, m.name+"recall@10")
					b.ReportMetric(m.s.NDCG10, m.name+"nDCG@10")
					b.ReportMetric(m.s.Success5, m.name+"success@5")
				}
			})
		}
	}
}
