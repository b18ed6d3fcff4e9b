package boltstore

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Vectors are durable: a reopened store has them in memory again, and a
// memory deleted before the reopen took its vector with it.
func TestVectorsSurviveReopen(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := storagetest.Operator()
	var ids []string
	for _, title := range []string{"a", "b"} {
		resp, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "c", Confidence: 1}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.GetMemory().GetId())
		if n, err := s.PutVectors(ctx, "m", []storage.VectorPut{{ID: ids[len(ids)-1], Text: title + " c", Vector: []float32{1, 2}}}); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	}
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: ids[1:]}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, Options{})
	if !s.HasVector(ids[0], "m") || s.HasVector(ids[1], "m") {
		t.Fatal("vectors after reopen")
	}
	if err := s.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
}
