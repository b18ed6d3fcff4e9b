package embedder

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// fakeEndpoint answers /v1/embeddings with 8-dimensional vectors derived
// from each input's length, or fails with 500 while failing is set.
type fakeEndpoint struct {
	*httptest.Server
	failing  atomic.Bool
	requests atomic.Int64
}

func newFake(t testing.TB) *fakeEndpoint {
	f := &fakeEndpoint{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if f.failing.Load() {
			http.Error(w, "down", 500)
			return
		}
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		var data []map[string]any
		for i, in := range req.Input {
			v := make([]float64, 8)
			v[len(in)%8] = 1
			v[(len(in)/8)%8] += 0.5
			data = append(data, map[string]any{"index": i, "embedding": v})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(f.Close)
	return f
}

func open(t testing.TB) *boltstore.Store {
	s, err := boltstore.Open(storagetest.Operator(), filepath.Join(t.TempDir(), "m.db"), storage.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func store(t testing.TB, s *boltstore.Store, title, content string) string {
	resp, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: content, Confidence: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetMemory().GetId()
}

func TestBackfillResumesWithholdsSecretsAndReportsFailure(t *testing.T) {
	f := newFake(t)
	s := open(t)
	e := New(&settings.Endpoint{BaseURL: f.URL, Model: "m", Timeout: "2s"}, records.New(s), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	for i := range 5 {
		store(t, s, fmt.Sprint("note ", i), "plain text")
	}
	secret := store(t, s, "key", "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")
	ctx := storagetest.Operator()

	first, err := e.Backfill(ctx, 3, "")
	if err != nil || first.GetEmbedded()+uint32(len(first.GetWithheld())) != 3 || first.GetNextAfter() == "" {
		t.Fatalf("first batch %v %v", first, err)
	}
	f.failing.Store(true)
	if _, err := e.Backfill(ctx, 3, first.GetNextAfter()); err == nil {
		t.Fatal("a failing endpoint gave no error")
	}
	if st := e.Status(); st.GetLastError() == "" {
		t.Fatalf("status after a failure: %v", st)
	}
	if _, _, reason := e.EmbedQuery(ctx, "q"); reason == "" {
		t.Fatal("a query was embedded while the endpoint cools down")
	}
	f.failing.Store(false)
	// Resume: the next run embeds the rest; the secret is never sent.
	rest, err := e.Backfill(ctx, 10, "")
	if err != nil || rest.GetNextAfter() != "" {
		t.Fatalf("resume %v %v", rest, err)
	}
	st := e.Status()
	if st.GetWithVector() != 5 || st.GetMemories() != 6 || st.GetLastError() != "" || st.GetWithheld() < 1 {
		t.Fatalf("status %v", st)
	}
	if s.HasVector(secret, "m") {
		t.Fatal("the memory holding a token was embedded")
	}
}

func TestEmbedOnWriteNeverBlocksAStore(t *testing.T) {
	f := newFake(t)
	s := open(t)
	// The engine's broadcaster feeds Run in the engine; here embedOne is the unit.
	e := New(&settings.Endpoint{BaseURL: f.URL, Model: "m", Timeout: "2s"}, records.New(s), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	id := store(t, s, "a", "b")
	e.embedOne(storagetest.Operator(), id)
	if !s.HasVector(id, "m") {
		t.Fatal("not embedded")
	}
	n := f.requests.Load()
	e.embedOne(storagetest.Operator(), id) // unchanged text: no request
	if f.requests.Load() != n {
		t.Fatal("an unchanged memory was embedded again")
	}
}

// BenchmarkBackfill: memories embedded per second by Backfill batches of
// 64 against a local endpoint (the endpoint's own work is trivial, so
// this is the engine's side: secret scan, HTTP, JSON, the vector writes).
func BenchmarkBackfill(b *testing.B) {
	f := newFake(b)
	for b.Loop() {
		b.StopTimer()
		s := open(b)
		for i := range 2000 {
			store(b, s, fmt.Sprint("note ", i), fmt.Sprintf("memory %d with some ordinary words about deploys and builds", i))
		}
		e := New(&settings.Endpoint{BaseURL: f.URL, Model: "m", Timeout: "5s", Concurrency: 4}, records.New(s), slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		b.StartTimer()
		start := time.Now()
		after := ""
		for {
			resp, err := e.Backfill(storagetest.Operator(), 64, after)
			if err != nil {
				b.Fatal(err)
			}
			if after = resp.GetNextAfter(); after == "" {
				break
			}
		}
		b.ReportMetric(2000/time.Since(start).Seconds(), "memories/s")
	}
}

// A model change is seen (vectors by another model need a reindex, and
// are not used) and a backfill replaces them.
func TestModelChangeNeedsReindex(t *testing.T) {
	f := newFake(t)
	s := open(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	old := New(&settings.Endpoint{BaseURL: f.URL, Model: "old", Timeout: "2s"}, records.New(s), log, nil)
	for i := range 3 {
		store(t, s, fmt.Sprint("note ", i), "text")
	}
	if _, err := old.Backfill(storagetest.Operator(), 10, ""); err != nil {
		t.Fatal(err)
	}
	e := New(&settings.Endpoint{BaseURL: f.URL, Model: "new", Timeout: "2s"}, records.New(s), log, nil)
	if st := e.Status(); st.GetWithVector() != 0 || st.GetOtherModel() != 3 {
		t.Fatalf("after the model changed: %v", st)
	}
	if res, err := s.Nearest(storagetest.Operator(), nil, []float32{1, 0, 0, 0, 0, 0, 0, 0}, "new", 5); err != nil || len(res) != 0 {
		t.Fatalf("vectors of the old model used: %v %v", res, err)
	}
	if _, err := e.Backfill(storagetest.Operator(), 10, ""); err != nil {
		t.Fatal(err)
	}
	if st := e.Status(); st.GetWithVector() != 3 || st.GetOtherModel() != 0 {
		t.Fatalf("after the reindex: %v", st)
	}
}
