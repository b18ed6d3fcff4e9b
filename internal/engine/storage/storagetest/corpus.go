package storagetest

import (
	"fmt"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// testTermStats: a text's terms in first-seen order, with their count in
// the text, the words they came from and their document frequencies; the
// existing tags the text spells out, most used first.
func testTermStats(t *testing.T, open Opener) {
	s, _ := open.open(t, storage.Options{})
	ctx := Operator()
	Store(t, s, Mem("Deploy rules", "Deploying on Fridays is risky.", Tags("deploy", "release train")))
	Store(t, s, Mem("Friday", "No deploys on Friday.", Tags("deploy")))
	Store(t, s, Mem("Lunch", "Lunch is at noon.", Tags("food")))

	resp, err := s.TermStats(ctx, &aimemoryv1.TermStatsRequest{Text: "Deploying the release train, deploying on Friday", Tags: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetDocs() != 3 {
		t.Fatalf("docs = %d, want 3", resp.GetDocs())
	}
	want := []struct {
		term, word string
		count      uint32
		df         uint64
	}{{"deploy", "deploying", 2, 2}, {"the", "the", 1, 0}, {"releas", "release", 1, 1}, {"train", "train", 1, 1}, {"on", "on", 1, 2}, {"friday", "friday", 1, 2}}
	if len(resp.GetTerms()) != len(want) {
		t.Fatalf("terms = %v, want %d", resp.GetTerms(), len(want))
	}
	for i, w := range want {
		g := resp.GetTerms()[i]
		if g.GetTerm() != w.term || g.GetWord() != w.word || g.GetCount() != w.count || g.GetDf() != w.df {
			t.Errorf("term %d = %v, want %+v", i, g, w)
		}
	}
	tags := resp.GetTags()
	if len(tags) != 2 || tags[0].GetTag() != "deploy" || tags[0].GetCount() != 2 || tags[1].GetTag() != "release train" {
		t.Fatalf("tags = %v, want deploy (2) then release train (1)", tags)
	}
}

// testRelatedTerms: terms co-occurring with the query in its matches,
// without the query's own terms or function words, best first; a term in
// one match only is not evidence.
func testRelatedTerms(t *testing.T, open Opener) {
	s, _ := open.open(t, storage.Options{})
	ctx := Operator()
	Store(t, s, Mem("Postgres pool", "The postgres connection pool uses pgbouncer."))
	Store(t, s, Mem("Pool sizing", "Size the postgres pool for pgbouncer limits."))
	Store(t, s, Mem("Replica", "Postgres replica lag alerts."))
	Store(t, s, Mem("Lunch", "Lunch is at noon, the pool is closed."))
	for i := range 5 {
		Store(t, s, Mem(fmt.Sprint("Filler ", i), "Unrelated filler text."))
	}
	resp, err := s.RelatedTerms(ctx, &aimemoryv1.RelatedTermsRequest{Query: "what about postgres?"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetMatched() != 3 || len(resp.GetQueryTerms()) != 1 || resp.GetQueryTerms()[0].GetTerm() != "postgr" {
		t.Fatalf("matched %d, query terms %v; want 3 and [postgr]", resp.GetMatched(), resp.GetQueryTerms())
	}
	rel := resp.GetRelated()
	if len(rel) < 2 || rel[0].GetWord() != "pgbouncer" {
		t.Fatalf("related = %v, want pgbouncer first", rel)
	}
	for _, r := range rel {
		if r.GetTerm() == "postgr" || r.GetTerm() == "the" || r.GetTerm() == "replica" || r.GetCount() < 2 {
			t.Errorf("related holds %v", r)
		}
	}
	if _, err := s.RelatedTerms(ctx, &aimemoryv1.RelatedTermsRequest{Query: "x", Limit: 101}); err == nil {
		t.Fatal("limit 101 accepted")
	}
}
