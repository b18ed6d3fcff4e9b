package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
)

// BenchmarkBackendsOverMCP compares the backends over MCP in one run: for
// 10k and 100k seeded memories, memory_store and memory_recall latency
// (p50/p95, one call at a time) on bbolt and on PostgreSQL, then store
// throughput with 8 calls in flight on bbolt (one engine), PostgreSQL with
// one engine, and PostgreSQL with two engines (two data dirs on one
// database, 4 calls each). Run one size with -bench 'BackendsOverMCP/memories=10000'.
// For a like-for-like commit cost set AI_MEMORY_TEST_PG_FSYNC=1 (pgtest's
// cluster otherwise runs without fsync; bbolt always fsyncs).
func BenchmarkBackendsOverMCP(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			boltFile := seedDataDir(b, n)
			dsn := pgtest.DSN(b)
			seedPostgres(b, dsn, n)
			backends := []struct {
				name string
				env  func(b *testing.B) *env
			}{
				{"bbolt", func(b *testing.B) *env {
					e := newEnv(b)
					copyFile(b, boltFile, filepath.Join(e.dataDir, "memory.db"))
					return e
				}},
				{"postgres", func(b *testing.B) *env {
					e := newEnv(b)
					e.usePostgres(dsn)
					return e
				}},
			}
			for _, be := range backends {
				e := be.env(b)
				s := startMCPClient(b, "ai-memory", e.binDir+"/ai-memory", e.environ(), "", "mcp")
				var seq atomic.Int64
				b.Run("backend="+be.name+"/op=store", func(b *testing.B) {
					samples, _ := s.measure(b, func(int) (string, map[string]any) {
						i := seq.Add(1)
						return "memory_store", map[string]any{"title": fmt.Sprintf("bench %s %d", be.name, i), "content": "a benchmark memory about replication and friday deploys"}
					})
					benchutil.ReportPercentiles(b, samples, "call")
				})
				b.Run("backend="+be.name+"/op=recall", func(b *testing.B) {
					samples, _ := s.measure(b, func(i int) (string, map[string]any) {
						return "memory_recall", map[string]any{"context": benchQuery(i), "limit": 10}
					})
					benchutil.ReportPercentiles(b, samples, "call")
				})
			}
			for _, tp := range []struct {
				name    string
				engines []*env
			}{
				{"bbolt-1-engine", []*env{backends[0].env(b)}},
				{"postgres-1-engine", []*env{backends[1].env(b)}},
				{"postgres-2-engines", []*env{backends[1].env(b), backends[1].env(b)}},
			} {
				var hosts []*host
				for _, e := range tp.engines {
					hosts = append(hosts, e.startHost(nil)) // as many hosts per engine as each has calls in flight
				}
				var seq atomic.Int64
				b.Run("throughput="+tp.name, func(b *testing.B) {
					benchutil.InFlight(b, 8, func(g int, _ int64) error {
						i := seq.Add(1)
						text, isErr, err := hosts[g%len(hosts)].tryCall("memory_store", map[string]any{
							"title": fmt.Sprintf("throughput %s %d", tp.name, i), "content": "a benchmark memory about deploy pipelines and friday releases"})
						if err == nil && isErr {
							err = fmt.Errorf("store %d: %s", i, text)
						}
						return err
					})
				})
			}
		})
	}
}

// seedPostgres writes memories 1…n into dsn's database through the
// storage layer, over four stores (an engine's writes are one at a time).
func seedPostgres(b *testing.B, dsn string, n int) {
	b.Helper()
	var stores []memoryStorer
	for range 4 {
		st, err := pgstore.Open(context.Background(), dsn, storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		stores = append(stores, records.New(st))
	}
	seedStores(b, n, stores...)
}
