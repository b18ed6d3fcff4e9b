package retrieval

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata from the generators")

// TestShippedCollections checks that the committed files are exactly what
// the generators make (go test ./e2e/retrieval -update rewrites them).
func TestShippedCollections(t *testing.T) {
	for _, c := range []*Collection{Notes(), Dialogue(), Agent()} {
		for name, want := range c.Files() {
			path := filepath.Join(Dir, c.Name, name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what the generator makes; run go test ./e2e/retrieval -update", path)
			}
		}
		loaded, err := Load(Dir, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(loaded.Docs) != len(c.Docs) || len(loaded.Queries) != len(c.Queries) || len(loaded.Qrels) != len(c.Qrels) {
			t.Errorf("%s: loaded %d docs %d queries %d judged, generated %d %d %d", c.Name,
				len(loaded.Docs), len(loaded.Queries), len(loaded.Qrels), len(c.Docs), len(c.Queries), len(c.Qrels))
		}
	}
}

func TestBM25(t *testing.T) {
	x := NewBM25()
	x.Add(Doc{ID: "a", Title: "deploy", Content: "friday deploy pipeline"})
	x.Add(Doc{ID: "b", Title: "lunch", Content: "friday lunch menu"})
	x.Add(Doc{ID: "c", Title: "misc", Content: "nothing here at all"})
	got := x.Search("Deploy on friday?", "", 10)
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("got %v, want [a b]", got)
	}
}

func TestTally(t *testing.T) {
	var tl Tally
	tl.Add([]string{"x", "a", "y"}, map[string]int{"a": 2, "b": 1})
	tl.Add([]string{"z"}, map[string]int{"z": 0}) // nothing relevant: not counted
	s := tl.Mean()
	if s.Queries != 1 || s.Recall5 != 0.5 || s.Success5 != 1 {
		t.Fatalf("got %+v", s)
	}
	// DCG = 3/log2(3); ideal = 3 + 1/log2(3).
	if want := (3 / 1.5849625007211563) / (3 + 1/1.5849625007211563); s.NDCG10 < want-1e-9 || s.NDCG10 > want+1e-9 {
		t.Fatalf("nDCG %v, want %v", s.NDCG10, want)
	}
}
