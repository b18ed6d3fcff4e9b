package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// BenchmarkStoreOverGRPC is store throughput through the engine's gRPC API
// on its unix socket, with 1, 8 and 32 calls in flight on one connection
// (like one plugin serving several tool calls), each acknowledged after
// its fsync. The store grows across the sub-benchmarks.
func BenchmarkStoreOverGRPC(b *testing.B) {
	dir := shortDir(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := serveAsync(ctx, Options{DataDir: dir, IdleTimeout: -1})
	defer func() { cancel(); <-done }()
	c := dial(b, dir)
	var seq atomic.Int64
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("inflight=%d", n), func(b *testing.B) {
			var next atomic.Int64
			lat := make([][]time.Duration, n)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for g := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						i := seq.Add(1)
						t0 := time.Now()
						_, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
							Title:   fmt.Sprintf("benchmark note %d", i),
							Content: fmt.Sprintf("stored over the engine socket by writer %d, call %d, with a few ordinary words", g, i),
							Tags:    []string{"bench"}, Namespace: "bench/grpc",
						}})
						if err != nil {
							b.Error(err)
							return
						}
						lat[g] = append(lat[g], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			all := slices.Concat(lat...)
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(all[len(all)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(all[len(all)*95/100].Nanoseconds()), "p95-ns")
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "stores/s")
		})
	}
}
