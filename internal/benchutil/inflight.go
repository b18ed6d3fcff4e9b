// Package benchutil holds what several packages' benchmarks share.
package benchutil

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// InFlight makes b.N calls from n goroutines at once (call gets the
// goroutine's number and a sequence number unique across the benchmark)
// and reports throughput as calls/s and latency as p50/p95/p99-ms. A call
// that fails stops its goroutine and fails the benchmark.
func InFlight(b *testing.B, n int, call func(g int, i int64) error) {
	b.Helper()
	var next atomic.Int64
	lat := make([][]time.Duration, n)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for g := range n {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				t0 := time.Now()
				if err := call(g, i); err != nil {
					b.Error(err)
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	ReportPercentiles(b, slices.Concat(lat...), "call")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// ReportPercentiles reports name-p50-ms, -p95-ms and -p99-ms of samples.
func ReportPercentiles(b *testing.B, samples []time.Duration, name string) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(p float64) float64 {
		return float64(samples[min(len(samples)-1, int(p*float64(len(samples))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.95), name+"-p95-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
}
