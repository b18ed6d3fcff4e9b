package pgstore

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkTwoEnginesStore: two stores on one database storing distinct
// titles at once (4 writers each): the write throughput of two engines,
// which the event log's lock row orders at the end of each commit.
func BenchmarkTwoEnginesStore(b *testing.B) {
	dsn := pgtest.DSN(b)
	var engines [2]*Store
	for i := range engines {
		s, err := Open(storagetest.Operator(), dsn, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		engines[i] = s
	}
	var n atomic.Int64
	b.SetParallelism(4) // 8 writers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			_, err := records.New(engines[i%2]).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
				Title: fmt.Sprintf("peer bench %d", i), Content: "two engines, one database", Confidence: 1,
			}})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkEventLogCost is the event log's cost on the store path: write
// transactions inserting one memory, in turn with no event (logEvents has
// nothing to do), with its event logged, and with its event logged and a
// delivery queued for one subscription (plus the NOTIFY). The three are
// interleaved write by write, so the machine's load weighs on all alike;
// each is reported as µs/write.
func BenchmarkEventLogCost(b *testing.B) {
	s := open(b, storage.Options{})
	ctx := storagetest.Operator()
	// The subscription matches the namespace of the third kind only.
	if err := s.PutSubscription(ctx, &storage.Subscription{ID: "cost", URL: "https://a.example/x", Events: []string{"*"},
		NamespaceFilter: "subscribed", CreatedBy: "ai:bench", Scope: "*"}); err != nil {
		b.Fatal(err)
	}
	kinds := []struct{ name, event, namespace string }{
		{"no-event", "", "global"}, {"logged", "memory_store", "global"}, {"logged+delivery", "memory_store", "subscribed"}}
	var spent [3]time.Duration
	var count [3]int
	i := 0
	for b.Loop() {
		i++
		k := i % len(kinds)
		start := time.Now()
		err := s.write(ctx, func(w *writeTx) error {
			m := &aimemoryv1.Memory{Id: fmt.Sprintf("0190aaaa-0000-7000-8000-%012d", i), Title: fmt.Sprintf("cost %d", i),
				Content: "the event log's cost", Namespace: kinds[k].namespace, CreatedAt: w.now, UpdatedAt: w.now}
			return w.put(nil, m, kinds[k].event)
		})
		if err != nil {
			b.Fatal(err)
		}
		spent[k] += time.Since(start)
		count[k]++
	}
	for k, kind := range kinds {
		if count[k] > 0 {
			b.ReportMetric(float64(spent[k].Microseconds())/float64(count[k]), "µs/"+kind.name)
		}
	}
}
