package storagetest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchTraverse measures a kg_query walk on st, shared by the backends'
// graph benchmarks: depth 3 outward from a random one of ids, at most 1000
// nodes; p50-ns, p95-ns and nodes/op.
func BenchTraverse(b *testing.B, st storage.Backend, ids []string) {
	r := rand.New(rand.NewPCG(3, 3))
	var lat []time.Duration
	nodes := 0
	for b.Loop() {
		req := &aimemoryv1.TraverseRequest{SourceId: ids[r.IntN(len(ids))], MaxDepth: 3, Limit: 1000, Direction: aimemoryv1.Direction_DIRECTION_OUT}
		start := time.Now()
		resp, err := st.Traverse(Operator(), req)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		nodes += len(resp.Nodes)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*50/100].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
	b.ReportMetric(float64(nodes)/float64(len(lat)), "nodes/op")
}
