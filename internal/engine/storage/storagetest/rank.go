package storagetest

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestRankingFormula checks scores computed by hand from the relevance-
// first formula (index/rank.go, docs/RETRIEVAL.md) on a corpus where every
// document has the same length and one occurrence of the query word, so
// BM25 is equal and the bounded factors decide; usage and tier do not.
func testRankingFormula(t *testing.T, o Opener) {
	// Long TTLs so the mid memories are still live ten days on.
	s, clk := o.open(t, storage.Options{TTL: storage.TTL{Short: 30 * 24 * time.Hour, Mid: 30 * 24 * time.Hour}})
	// Each document: title word + "deploy the service" = 4 terms.
	alpha := Store(t, s, Mem("alpha", "deploy the service"))                        // p5 mid
	Store(t, s, Mem("bravo", "deploy the service", prio(7)))                        // p7 mid
	charlie := Store(t, s, Mem("charlie", "deploy the service", Tier("long")))      // p5 long
	delta := Store(t, s, Mem("delta", "deploy the service", Tier("long"), prio(4))) // p4 long
	_ = Store(t, s, Mem("echo", "unrelated words here"))                            // no match
	delta.Confidence = 0.5
	if _, err := s.UpdateMemory(AsOperator(t.Context()), &aimemoryv1.UpdateMemoryRequest{Id: delta.Id, Confidence: &delta.Confidence}); err != nil {
		t.Fatal(err)
	}
	clk.Add(15 * 24 * time.Hour) // f_recency = 1 + 0.03/(1 + 15/30) = 1.02 for all

	// BM25 of "deploy": N=5, n=4, tf=1, dl = avgdl = 4 → tf part 2.2/2.2 = 1.
	bm25 := math.Log(1 + (5-4+0.5)/(4+0.5))
	f := func(priority int, confidence float64) float64 {
		return bm25 * (1 + 0.015*float64(priority-5)) * (0.96 + 0.04*confidence) * 1.02
	}
	want := map[string]float64{"alpha": f(5, 1), "bravo": f(7, 1), "charlie": f(5, 1), "delta": f(4, 0.5)}
	check := func(name string, res []*aimemoryv1.ScoredMemory, order []string) {
		t.Helper()
		if got := TitlesOf(res); !reflect.DeepEqual(got, order) {
			t.Errorf("%s order = %q, want %q", name, got, order)
		}
		for _, r := range res {
			if w := want[r.Memory.Title]; math.Abs(r.Score-w) > 1e-9 {
				t.Errorf("%s score of %s = %.6f, want %.6f", name, r.Memory.Title, r.Score, w)
			}
		}
	}

	// alpha and charlie tie on score and on updated_at (one instant), so the
	// smaller id goes first; tier makes no difference, in recall either.
	tied := []string{"alpha", "charlie"}
	if charlie.Id < alpha.Id {
		tied = []string{"charlie", "alpha"}
	}
	if alpha.UpdatedAt != charlie.UpdatedAt {
		t.Fatal("test assumes one instant for all stores")
	}
	order := append(append([]string{"bravo"}, tied...), "delta")
	recall := &aimemoryv1.SearchMemoriesRequest{Query: "deploy", Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY}
	check("search", Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "deploy"}), order)
	check("recall", Search(t, s, recall), order)

	// Being returned changes nothing: a hundred touches later (alpha is
	// promoted to long on the way), the order and the scores are the same.
	for range 100 {
		if _, err := s.TouchMemories(AsOperator(t.Context()), &aimemoryv1.TouchMemoriesRequest{Ids: []string{alpha.Id}}); err != nil {
			t.Fatal(err)
		}
	}
	check("recall after touches", Search(t, s, recall), order)
}

// TestRankingBounded: priority, confidence and recency together move a
// score by at most 1.23×, so a memory matching the query's rare word
// outranks one matching only a common word, whatever their weights.
func testRankingBounded(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	weak := Store(t, s, Mem("weak", "kafka notes for the team", prio(10), Tier("long")))
	for i := range 8 {
		Store(t, s, Mem(fmt.Sprintf("filler %d", i), "kafka topics and partitions", Tier("long")))
	}
	clk.Add(365 * 24 * time.Hour) // the strong one is newer, the weak one old:
	strong := Store(t, s, Mem("strong", "zookeeper quorum lost: kafka brokers stalled", prio(1)))
	strong.Confidence = 0
	if _, err := s.UpdateMemory(AsOperator(t.Context()), &aimemoryv1.UpdateMemoryRequest{Id: strong.Id, Confidence: &strong.Confidence}); err != nil {
		t.Fatal(err)
	}
	got := Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "kafka zookeeper", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL})
	if len(got) != 9+1 || got[0].Memory.Id != strong.Id || !slices.ContainsFunc(got, func(r *aimemoryv1.ScoredMemory) bool { return r.Memory.Id == weak.Id }) {
		t.Fatalf("order %q, want strong first, weak among the rest", TitlesOf(got))
	}
	// Every factor at its extreme: priority 1 vs 10 (0.94 vs 1.075),
	// confidence 0 vs 1 (0.96 vs 1), a year old vs new (1.0024 vs 1.03).
	for _, r := range got[1:] {
		if r.Score/got[0].Score > 1.23 {
			t.Errorf("%s scores %.3f, strong %.3f: the factors spread more than 1.23x", r.Memory.Title, r.Score, got[0].Score)
		}
	}
}

func testRankingTermFrequency(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	// Same length (4 terms), different term frequency.
	Store(t, s, Mem("once", "kafka broker cluster"))
	Store(t, s, Mem("twice", "kafka kafka broker"))
	got := Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "kafka"})
	if titles := TitlesOf(got); !reflect.DeepEqual(titles, []string{"twice", "once"}) {
		t.Fatalf("order %q", titles)
	}
	// idf = ln(1+0.5/2.5); tf part = tf·2.2/(tf+1.2); default priority and
	// confidence 1 give factors of 1, stored just now f_recency 1.03.
	idf := math.Log(1 + 0.5/2.5)
	if w := idf * 2 * 2.2 / (2 + 1.2) * 1.03; math.Abs(got[0].Score-w) > 1e-9 {
		t.Errorf("twice score %.6f, want %.6f", got[0].Score, w)
	}
	if w := idf * 2.2 / (1 + 1.2) * 1.03; math.Abs(got[1].Score-w) > 1e-9 {
		t.Errorf("once score %.6f, want %.6f", got[1].Score, w)
	}
}

// TestRecallFunctionWords: recall drops function words from a question
// that has other words; search keeps them (all must match).
func testRecallFunctionWords(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	dog := Store(t, s, Mem("dog", "we adopted a dog named Biscuit"))
	Store(t, s, Mem("grammar", "what did you do with what you had, and what was it for?"))
	anyMode := &aimemoryv1.SearchMemoriesRequest{Query: "What did they name the dog?", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL}
	if got := Search(t, s, anyMode); len(got) != 1 || got[0].Memory.Id != dog.Id {
		t.Errorf("recall = %q, want only dog", TitlesOf(got))
	}
	anyMode.Query = "what did it do"
	if got := Search(t, s, anyMode); len(got) != 1 || got[0].Memory.Title != "grammar" {
		t.Errorf("recall of function words only = %q, want grammar", TitlesOf(got))
	}
	if got := Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "what dog"}); len(got) != 0 {
		t.Errorf("search for every word found %q", TitlesOf(got))
	}
}

// TestListOrder: priority desc, then updated_at desc, then id.
func testListOrder(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	old := Store(t, s, Mem("old", "x"))
	clk.Add(time.Second)
	newer := Store(t, s, Mem("newer", "x"))
	same := Store(t, s, Mem("same instant", "x"))
	Store(t, s, Mem("important", "x", prio(9)))
	tied := []string{"newer", "same instant"}
	if same.Id < newer.Id {
		tied = []string{"same instant", "newer"}
	}
	want := append(append([]string{"important"}, tied...), "old")
	l, err := s.ListMemories(AsOperator(t.Context()), &aimemoryv1.ListMemoriesRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := memTitles(l.Memories); !reflect.DeepEqual(got, want) {
		t.Errorf("list order %q, want %q", got, want)
	}
	if l, _ := s.ListMemories(AsOperator(t.Context()), &aimemoryv1.ListMemoriesRequest{Limit: 2}); len(l.Memories) != 2 {
		t.Errorf("limit 2 gave %d", len(l.Memories))
	}
	if l, _ := s.ListMemories(AsOperator(t.Context()), &aimemoryv1.ListMemoriesRequest{}); len(l.Memories) != 0 {
		t.Errorf("limit 0 gave %d", len(l.Memories))
	}
	_ = old
}

func testMatchModesStemmingAndSanitising(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	Store(t, s, Mem("both", "deploy and rollback"))
	Store(t, s, Mem("deploy only", "ship it"))
	Store(t, s, Mem("rollback only", "undo it"))
	Store(t, s, Mem("runner", "the job runs daily"))
	Store(t, s, Mem("mailer", "send an e-mail to ops"))
	Store(t, s, Mem("snake", "call memory_store first"))

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
		got := TitlesOf(Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: tc.query, Match: tc.match}))
		slices.Sort(got)
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q = %q, want %q", tc.match, tc.query, got, tc.want)
		}
	}
	// In ANY mode a document with more of the words ranks first.
	if got := TitlesOf(Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "deploy rollback", Match: anyMode})); got[0] != "both" {
		t.Errorf("ANY ranks %q first", got[0])
	}
	// limit 0 means none.
	resp, err := s.SearchMemories(AsOperator(t.Context()), &aimemoryv1.SearchMemoriesRequest{Query: "deploy"}, nil)
	if err != nil || len(resp.Results) != 0 {
		t.Errorf("limit 0 returned %d results, %v", len(resp.GetResults()), err)
	}
}
