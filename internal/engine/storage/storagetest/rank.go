package storagetest

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// TestRankingFormula checks scores computed by hand from data-model §9.2
// on a corpus where every document has the same length and one occurrence
// of the query word, so BM25 is equal and the weights decide.
func testRankingFormula(t *testing.T, o Opener) {
	// Long TTLs so the mid memories are still live ten days on.
	s, clk := o.open(t, storage.Options{TTL: storage.TTL{Short: 30 * 24 * time.Hour, Mid: 30 * 24 * time.Hour}})
	// Each document: title word + "deploy the service" = 4 terms.
	alpha := store(t, s, mem("alpha", "deploy the service"))                        // p5 mid
	store(t, s, mem("bravo", "deploy the service", prio(7)))                        // p7 mid
	charlie := store(t, s, mem("charlie", "deploy the service", tier("long")))      // p5 long
	delta := store(t, s, mem("delta", "deploy the service", tier("long"), prio(4))) // p4 long
	_ = store(t, s, mem("echo", "unrelated words here"))                            // no match
	delta.Confidence = 0.5
	if _, err := s.UpdateMemory(t.Context(), &aimemoryv1.UpdateMemoryRequest{Id: delta.Id, Confidence: &delta.Confidence}); err != nil {
		t.Fatal(err)
	}
	clk.Add(10 * 24 * time.Hour) // recency term 1/(1+0.1·10) = 0.5 for all

	// BM25 of "deploy": N=5, n=4, tf=1, dl = avgdl = 4 → tf part 2.2/2.2 = 1.
	bm25 := math.Log(1 + (5-4+0.5)/(4+0.5))
	want := map[string]float64{
		"alpha":   bm25 + 0.5*5 + 2*1.0 + 0.5,
		"bravo":   bm25 + 0.5*7 + 2*1.0 + 0.5,
		"charlie": bm25 + 0.5*5 + 2*1.0 + 0.5,
		"delta":   bm25 + 0.5*4 + 2*0.5 + 0.5,
	}
	check := func(name string, res []*aimemoryv1.ScoredMemory, order []string, bonus map[string]float64) {
		t.Helper()
		if got := titlesOf(res); !reflect.DeepEqual(got, order) {
			t.Errorf("%s order = %q, want %q", name, got, order)
		}
		for _, r := range res {
			if w := want[r.Memory.Title] + bonus[r.Memory.Title]; math.Abs(r.Score-w) > 1e-9 {
				t.Errorf("%s score of %s = %.6f, want %.6f", name, r.Memory.Title, r.Score, w)
			}
		}
	}

	// Search: no tier bonus. alpha and charlie tie on score and on
	// updated_at (one instant), so the smaller id goes first.
	tied := []string{"alpha", "charlie"}
	if charlie.Id < alpha.Id {
		tied = []string{"charlie", "alpha"}
	}
	if alpha.UpdatedAt != charlie.UpdatedAt {
		t.Fatal("test assumes one instant for all stores")
	}
	check("search", search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "deploy"}),
		append(append([]string{"bravo"}, tied...), "delta"), nil)

	// Recall: long +3, mid +1 reorders them.
	bonus := map[string]float64{"alpha": 1, "bravo": 1, "charlie": 3, "delta": 3}
	check("recall", search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "deploy", Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY}),
		[]string{"charlie", "bravo", "delta", "alpha"}, bonus)

	// Access count adds 0.1 each (capped at 50): three touches lift alpha over charlie.
	for range 3 {
		if _, err := s.TouchMemories(t.Context(), &aimemoryv1.TouchMemoriesRequest{Ids: []string{alpha.Id}}); err != nil {
			t.Fatal(err)
		}
	}
	want["alpha"] += 0.3
	check("search after touches", search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "deploy"}),
		[]string{"bravo", "alpha", "charlie", "delta"}, nil)
}

func testRankingTermFrequency(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	// Same length (4 terms), different term frequency.
	store(t, s, mem("once", "kafka broker cluster"))
	store(t, s, mem("twice", "kafka kafka broker"))
	got := search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "kafka"})
	if titles := titlesOf(got); !reflect.DeepEqual(titles, []string{"twice", "once"}) {
		t.Fatalf("order %q", titles)
	}
	// idf = ln(1+0.5/2.5); tf part = tf·2.2/(tf+1.2).
	idf := math.Log(1 + 0.5/2.5)
	weights := 0.5*5 + 2.0 + 1.0
	if w := idf*2*2.2/(2+1.2) + weights; math.Abs(got[0].Score-w) > 1e-9 {
		t.Errorf("twice score %.6f, want %.6f", got[0].Score, w)
	}
	if w := idf*2.2/(1+1.2) + weights; math.Abs(got[1].Score-w) > 1e-9 {
		t.Errorf("once score %.6f, want %.6f", got[1].Score, w)
	}

}

// TestListOrder: priority desc, then updated_at desc, then id.
func testListOrder(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	old := store(t, s, mem("old", "x"))
	clk.Add(time.Second)
	newer := store(t, s, mem("newer", "x"))
	same := store(t, s, mem("same instant", "x"))
	store(t, s, mem("important", "x", prio(9)))
	tied := []string{"newer", "same instant"}
	if same.Id < newer.Id {
		tied = []string{"same instant", "newer"}
	}
	want := append(append([]string{"important"}, tied...), "old")
	l, err := s.ListMemories(t.Context(), &aimemoryv1.ListMemoriesRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := memTitles(l.Memories); !reflect.DeepEqual(got, want) {
		t.Errorf("list order %q, want %q", got, want)
	}
	if l, _ := s.ListMemories(t.Context(), &aimemoryv1.ListMemoriesRequest{Limit: 2}); len(l.Memories) != 2 {
		t.Errorf("limit 2 gave %d", len(l.Memories))
	}
	if l, _ := s.ListMemories(t.Context(), &aimemoryv1.ListMemoriesRequest{}); len(l.Memories) != 0 {
		t.Errorf("limit 0 gave %d", len(l.Memories))
	}
	_ = old
}

func testMatchModesStemmingAndSanitising(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	store(t, s, mem("both", "deploy and rollback"))
	store(t, s, mem("deploy only", "ship it"))
	store(t, s, mem("rollback only", "undo it"))
	store(t, s, mem("runner", "the job runs daily"))
	store(t, s, mem("mailer", "send an e-mail to ops"))
	store(t, s, mem("snake", "call memory_store first"))

	all := aimemoryv1.MatchMode_MATCH_MODE_ALL
	anyMode := aimemoryv1.MatchMode_MATCH_MODE_ANY
	tests := []struct {
		query string
		match aimemoryv1.MatchMode
		want  []string // sorted
	}{
		{"deploy rollback", all, []string{"both"}},
		{"deploy rollback", aimemoryv1.MatchMode_MATCH_MODE_UNSPECIFIED, []string{"both"}},
		{"deploy rollback", anyMode, []string{"both", "deploy only", "rollback only"}},
		{"running", all, []string{"runner"}},
		{"RUNS", all, []string{"runner"}},
		{`"deploy" AND (rollback)`, all, []string{"both"}},
		{"deploy OR nothing", all, nil},
		{"deploy OR nothing", anyMode, []string{"both", "deploy only"}},
		{"AND or NOT near", anyMode, nil},
		{"", anyMode, nil},
		{`*** ^ {} ( ) : | +`, anyMode, nil},
		{"depl\u200boy", all, []string{"both", "deploy only"}},
		{"\u202erollback\u202c", all, []string{"both", "rollback only"}},
		{"email", all, []string{"mailer"}},
		{"mail", all, []string{"mailer"}},
		{"e-mail", all, []string{"mailer"}},
		{"store", all, []string{"snake"}},
		{"memory_store", all, []string{"snake"}},
		{"deploy:rollback", all, []string{"both"}},
	}
	for _, tc := range tests {
		got := titlesOf(search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: tc.query, Match: tc.match}))
		slices.Sort(got)
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q = %q, want %q", tc.match, tc.query, got, tc.want)
		}
	}
	// In ANY mode a document with more of the words ranks first.
	if got := titlesOf(search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "deploy rollback", Match: anyMode})); got[0] != "both" {
		t.Errorf("ANY ranks %q first", got[0])
	}
	// limit 0 means none.
	resp, err := s.SearchMemories(t.Context(), &aimemoryv1.SearchMemoriesRequest{Query: "deploy"})
	if err != nil || len(resp.Results) != 0 {
		t.Errorf("limit 0 returned %d results, %v", len(resp.GetResults()), err)
	}
}
