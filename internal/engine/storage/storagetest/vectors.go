package storagetest

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// testVectors: a vector is stored only for the record's current text, goes
// with an edit of title or content or with the record, not with a tags
// edit; nearest ranks by cosine within the filter; a hybrid search fuses.
func testVectors(t *testing.T, open Opener) {
	s, _ := open.open(t, storage.Options{})
	ctx := Operator()
	a := Store(t, s, Mem("alpha", "first", InNS("v")))
	b := Store(t, s, Mem("beta", "second", InNS("v")))
	c := Store(t, s, Mem("gamma", "third", InNS("w")))
	put := func(m *aimemoryv1.Memory, text string, v ...float32) bool {
		t.Helper()
		n, err := s.PutVectors(ctx, "m1", []storage.VectorPut{{ID: m.GetId(), Text: text, Vector: v}})
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if put(a, "alpha old text", 1, 0) {
		t.Fatal("a vector of text the record no longer has was stored")
	}
	if !put(a, "alpha first", 1, 0) || !put(b, "beta second", 0.6, 0.8) || !put(c, "gamma third", 0.9, 0.1) {
		t.Fatal("vectors of the current text not stored")
	}
	if mem, cur, other := s.VectorStatus("m1"); mem != 3 || cur != 3 || other != 0 {
		t.Fatalf("status = %d %d %d", mem, cur, other)
	}
	if _, cur, other := s.VectorStatus("m2"); cur != 0 || other != 3 {
		t.Fatalf("another model: %d current, %d other; want 0, 3", cur, other)
	}
	near, err := s.Nearest(ctx, &aimemoryv1.Filter{Namespace: "v"}, []float32{1, 0}, "m1", 5)
	if err != nil || len(near) != 2 || near[0].GetMemory().GetId() != a.GetId() || near[1].GetMemory().GetId() != b.GetId() {
		t.Fatalf("nearest in v = %v, %v", near, err)
	}
	if near[0].GetScore() < 0.999 || near[1].GetScore() > 0.61 {
		t.Errorf("cosines %v %v", near[0].GetScore(), near[1].GetScore())
	}
	if near, _ := s.Nearest(ctx, nil, []float32{1, 0, 0}, "m1", 5); len(near) != 0 {
		t.Errorf("another dimension matched %v", near)
	}

	res, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "second", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY,
		Limit: 3}, &storage.Hybrid{Vector: []float32{1, 0}, Model: "m1"})
	if err != nil || res.GetMode() != "hybrid" || len(res.GetResults()) != 3 {
		t.Fatalf("hybrid = %v, %v", res, err)
	}

	// Tags only: the text embedded is unchanged.
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: a.GetId(), SetTags: true, Tags: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if !s.HasVector(a.GetId(), "m1") {
		t.Fatal("a tags edit dropped the vector")
	}
	content := "changed"
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: a.GetId(), Content: &content}); err != nil {
		t.Fatal(err)
	}
	if s.HasVector(a.GetId(), "m1") {
		t.Fatal("a content edit kept the old text's vector")
	}
	if missing, err := s.MissingVectors(ctx, "m1", "", 10); err != nil || len(missing) != 1 || missing[0].GetId() != a.GetId() {
		t.Fatalf("missing = %v, %v", missing, err)
	}
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{b.GetId()}}); err != nil {
		t.Fatal(err)
	}
	if s.HasVector(b.GetId(), "m1") {
		t.Fatal("a deleted memory kept its vector")
	}
	check(t, s)
}
