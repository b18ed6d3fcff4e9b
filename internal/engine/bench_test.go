package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkStoreOverGRPC is store throughput through the engine's gRPC API
// on its unix socket, with 1, 8 and 32 calls in flight on one connection
// (like one plugin serving several tool calls), each acknowledged after
// its fsync. The store grows across the sub-benchmarks.
func BenchmarkStoreOverGRPC(b *testing.B) {
	dir := shortDir(b)
	ctx, cancel := context.WithCancel(storagetest.Operator())
	done := serveAsync(ctx, Options{DataDir: dir, IdleTimeout: -1})
	defer func() { cancel(); testwait.Recv(b, done, "the engine to stop") }()
	c := dial(b, dir)
	var seq atomic.Int64
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("inflight=%d", n), func(b *testing.B) {
			benchutil.InFlight(b, n, func(g int, _ int64) error {
				i := seq.Add(1)
				_, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title:   fmt.Sprintf("benchmark note %d", i),
					Content: fmt.Sprintf("stored over the engine socket by writer %d, call %d, with a few ordinary words", g, i),
					Tags:    []string{"bench"}, Namespace: "bench/grpc",
				}})
				return err
			})
		})
	}
}
