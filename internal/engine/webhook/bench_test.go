package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// benchRig is a real store and dispatcher on real time, posting to url.
func benchRig(b *testing.B, url string) *boltstore.Store {
	b.Helper()
	dir := b.TempDir()
	ev := &events.Broadcaster{}
	st, err := boltstore.Open(storagetest.Operator(), filepath.Join(dir, "memory.db"), storage.Options{Events: ev})
	if err != nil {
		b.Fatal(err)
	}
	sealer, _ := webhook.OpenSealer(dir)
	ctx, cancel := context.WithCancel(storagetest.Operator())
	done := make(chan struct{})
	d := webhook.New(webhook.Config{Store: records.New(st), Events: ev, Guard: webhook.Guard{AllowLoopback: true}, Sealer: sealer,
		Backoff: webhook.Backoff{Base: time.Hour, Attempts: 2}, Timeout: time.Minute})
	go func() { defer close(done); d.Run(ctx) }()
	b.Cleanup(func() { cancel(); testwait.Recv(b, done, "the dispatcher to stop"); st.Close() })
	if url != "" {
		sealed, _ := sealer.Seal("bench", []byte("k"))
		if err := st.PutSubscription(storagetest.Operator(), &storage.Subscription{ID: "bench", URL: url, Events: []string{"*"},
			SealedSecret: sealed, CreatedBy: "ai:bench", Scope: "*", CreatedAt: 1}); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

func benchStore(st *boltstore.Store, i int) error {
	_, err := records.New(st).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{Title: fmt.Sprintf("bench %d", i), Content: "webhook benchmark memory"}})
	return err
}

// BenchmarkWebhookDelivery: from a store's return (committed, fsynced) to
// the receiver having the signed delivery, one at a time.
func BenchmarkWebhookDelivery(b *testing.B) {
	got := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { got <- time.Now() }))
	defer srv.Close()
	st := benchRig(b, srv.URL)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if err := benchStore(st, i); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		at := <-got
		lat = append(lat, at.Sub(t0))
	}
	b.StopTimer()
	benchutil.ReportPercentiles(b, lat, "delivery")
}

// BenchmarkStoreWithWebhook: store latency with no subscription, with a
// receiver that answers, and with one that never answers (every attempt
// hangs until its timeout): a write must not wait for any of them.
func BenchmarkStoreWithWebhook(b *testing.B) {
	hanging := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client hanging up
		<-r.Context().Done()
	}))
	defer hanging.Close()
	answering := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer answering.Close()
	for _, tc := range []struct{ name, url string }{{"none", ""}, {"answering", answering.URL}, {"hanging", hanging.URL}} {
		b.Run(tc.name, func(b *testing.B) {
			st := benchRig(b, tc.url)
			benchutil.InFlight(b, 1, func(_ int, i int64) error { return benchStore(st, int(i)) })
		})
	}
}
