package pgstore

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestVectorsSeenByOtherEngines: a vector one engine stores, and its drop
// by another engine's edit of the text, show in the other engine's
// synchronous reads (HasVector, VectorStatus) and in its Nearest; a new
// engine loads them.
func TestVectorsSeenByOtherEngines(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := storagetest.Operator()
	var a, b *Store
	for _, s := range []**Store{&a, &b} {
		var err error
		if *s, err = Open(ctx, dsn, storage.Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*s).Close() })
	}
	m := storagetest.Store(t, records.New(a), storagetest.Mem("alpha", "first"))
	if n, err := a.PutVectors(ctx, "m1", []storage.VectorPut{{ID: m.GetId(), Text: "alpha first", Vector: []float32{3, 4}}}); err != nil || n != 1 {
		t.Fatalf("put = %d, %v", n, err)
	}
	if !b.HasVector(m.GetId(), "m1") {
		t.Fatal("engine b does not see engine a's vector")
	}
	if _, cur, _ := b.VectorStatus("m1"); cur != 1 {
		t.Fatalf("engine b counts %d current vectors, want 1", cur)
	}
	near, err := b.Nearest(ctx, nil, []float32{0.6, 0.8}, "m1", 3)
	if err != nil || len(near) != 1 || near[0].GetMemory().GetId() != m.GetId() || near[0].GetScore() < 0.999 {
		t.Fatalf("engine b nearest = %v, %v", near, err)
	}
	c, err := Open(ctx, dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.HasVector(m.GetId(), "m1") {
		t.Fatal("a new engine did not load the vector")
	}

	content := "edited"
	if _, err := records.New(b).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.GetId(), Content: &content}); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"a": a, "b": b, "c": c} {
		if s.HasVector(m.GetId(), "m1") {
			t.Errorf("engine %s keeps the vector of text edited away", name)
		}
		if err := s.CheckConsistency(ctx); err != nil {
			t.Errorf("engine %s: %v", name, err)
		}
	}
}

// TestCapabilities: every flag is named and explained; pgvector, absent
// from this server, is reported off with why.
func TestCapabilities(t *testing.T) {
	s := open(t, storage.Options{})
	caps := map[string]storage.Capability{}
	for _, c := range s.Capabilities() {
		if c.Detail == "" {
			t.Errorf("capability %s has no detail", c.Name)
		}
		caps[c.Name] = c
	}
	if c := caps[storage.CapVectorIndex]; c.On && s.pgv.detail == "" {
		t.Errorf("vector index on without detail: %+v", c)
	}
	if !caps[storage.CapSharedStore].On || caps[storage.CapBackup].On {
		t.Errorf("capabilities = %+v", caps)
	}
	if _, err := s.Backup(storagetest.Operator(), nil); err == nil {
		t.Error("Backup did not refuse")
	}
}
