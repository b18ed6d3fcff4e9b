package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkAtScale starts a host on a data dir already holding 10k or
// 100k memories, as after a restart, and reports the time from spawning
// the host to the first answered search (which includes starting the
// engine and loading its index), then the memory of each process.
func BenchmarkAtScale(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		seeded := seedDataDir(b, n) // once: sub-benchmarks run more than once
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			var firstAnswer []time.Duration
			for i := 0; i < b.N; i++ {
				e := newEnv(b)
				copyFile(b, seeded, filepath.Join(e.dataDir, "memory.db"))
				start := time.Now()
				h := e.startHost(nil)
				h.ok("memory_search", map[string]any{"query": "replication", "limit": 5, "format": "json"})
				firstAnswer = append(firstAnswer, time.Since(start))
				reportRSS(b, e, h.pid())
				h.close()
			}
			benchutil.ReportPercentiles(b, firstAnswer, "first-answer")
		})
	}
}

// seedDataDir writes n memories into a bbolt file, through the storage
// layer with 32 writers (group commit keeps it quick).
func seedDataDir(b *testing.B, n int) string {
	b.Helper()
	dir, err := os.MkdirTemp("", "aimseed")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "memory.db")
	st, err := boltstore.Open(context.Background(), path, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	seedStores(b, n, records.New(st))
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

// memoryStorer is either backend's store of memories.
type memoryStorer interface {
	StoreMemory(context.Context, *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error)
}

// seedStores writes memories 1…n through the storage layer, with 32
// writers spread over stores (group commit, or several engines' worth of
// connections, keeps it quick).
func seedStores(b *testing.B, n int, stores ...memoryStorer) {
	b.Helper()
	ctx := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:seed", Family: "core", Scope: caller.AllNamespaces})
	words := []string{"replication", "postgres", "deploy", "friday", "cache", "index", "latency", "review", "budget", "schema", "migration", "token"}
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range 32 {
		st := stores[g%len(stores)]
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				w := func(k int64) string { return words[(i*k)%int64(len(words))] }
				_, err := st.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title:     fmt.Sprintf("note %d about %s", i, w(7)),
					Content:   fmt.Sprintf("%s %s %s and %s, item %d", w(3), w(5), w(11), w(13), i),
					Namespace: fmt.Sprintf("proj/p%d", i%50), Tier: "long", Priority: 5, Confidence: 1,
				}})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
