package e2e

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ai-memory/ai-memory/internal/benchutil"
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
			benchutil.InFlight(b, n, func(g int, _ int64) error {
				i := seq.Add(1)
				text, isErr, err := hosts[g%len(hosts)].tryCall("memory_store", map[string]any{
					"title": fmt.Sprintf("throughput %d", i), "content": "a benchmark memory about deploy pipelines and friday releases"})
				if err == nil && isErr {
					err = fmt.Errorf("store %d: %s", i, text)
				}
				return err
			})
		})
	}
}
