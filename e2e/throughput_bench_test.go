package e2e

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkStoreThroughputOverMCP is memory_store throughput end to end
// with 1, 8 and 32 calls in flight, spread over two hosts of one data dir
// (each host's stdio front runs at most 16 calls at once), every store
// acknowledged after the fsync that covers it. The engine commits the
// stores in flight together (group commit).
func BenchmarkStoreThroughputOverMCP(b *testing.B) {
	e := newEnv(b)
	hosts := []*host{e.startHost(nil), e.startHost(nil)}
	var seq atomic.Int64
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("inflight=%d", n), func(b *testing.B) {
			var next atomic.Int64
			lat := make([][]time.Duration, n)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for g := range n {
				h := hosts[g%len(hosts)]
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						i := seq.Add(1)
						t0 := time.Now()
						text, isErr, err := h.tryCall("memory_store", map[string]any{
							"title": fmt.Sprintf("throughput %d", i), "content": "a benchmark memory about deploy pipelines and friday releases"})
						if err != nil || isErr {
							b.Errorf("store %d: %v %s", i, err, text)
							return
						}
						lat[g] = append(lat[g], time.Since(t0))
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			reportPercentiles(b, slices.Concat(lat...), "store")
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "stores/s")
		})
	}
}
