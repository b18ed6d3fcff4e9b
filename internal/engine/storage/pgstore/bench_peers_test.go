package pgstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// BenchmarkTwoEnginesStore: two stores on one database storing distinct
// titles at once (4 writers each): the write throughput of two engines,
// which the event log's lock row orders at the end of each commit.
func BenchmarkTwoEnginesStore(b *testing.B) {
	dsn := pgtest.DSN(b)
	var engines [2]*Store
	for i := range engines {
		s, err := Open(context.Background(), dsn, storage.Options{})
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
			_, err := engines[i%2].StoreMemory(context.Background(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
				Title: fmt.Sprintf("peer bench %d", i), Content: "two engines, one database", Confidence: 1,
			}})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}
