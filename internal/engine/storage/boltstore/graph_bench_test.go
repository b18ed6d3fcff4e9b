package boltstore

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Engine-side cost of the graph family's reads on 10k memories with 50k
// random links (plus a hub with 1k outbound links), bulk-loaded: what a
// traversal level and a timeline cost before gRPC and the plugin. The
// kg_query latencies as a tool are measured in plugins/graph/graphfamily
// (over gRPC) and e2e (over MCP).

type graphBench struct {
	s   *Store
	rs  *records.Store // what the engine serves
	ids []string
	hub string
}

var (
	graphBenchOnce sync.Once
	graphBenchG    *graphBench
)

func loadGraphBench(b *testing.B) *graphBench {
	b.Helper()
	graphBenchOnce.Do(func() {
		s := benchStore(b, 10_000)
		g := &graphBench{s: s, rs: records.New(s)}
		g.ids = s.idx.IDs()
		r := rand.New(rand.NewPCG(7, 7))
		g.hub = g.ids[0]
		err := s.write(storagetest.Operator(), func(w *writeTx) error {
			put := func(a, b, rel string) error {
				return putLink(w.tx, &aimemoryv1.Link{SourceId: a, TargetId: b, Relation: rel, CreatedAt: w.now, ValidFrom: w.now, ObservedBy: "ai:bench"})
			}
			for n := 0; n < 50_000; {
				a, b := g.ids[r.IntN(len(g.ids))], g.ids[r.IntN(len(g.ids))]
				if a == b {
					continue
				}
				if err := put(a, b, record.Relations[r.IntN(4)]); err != nil {
					return err
				}
				n++
			}
			for i := 1; i <= 1000; i++ {
				if err := put(g.hub, g.ids[i], "derived_from"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		graphBenchG = g
	})
	return graphBenchG
}

// BenchmarkGraphFrontier is one traversal level: the links of a frontier
// of n memories with the far ends' titles (n = 1, 25, 125: the levels of a
// depth-3 walk at out-degree 5).
func BenchmarkGraphFrontier(b *testing.B) {
	g := loadGraphBench(b)
	for _, n := range []int{1, 25, 125} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, uint64(n)))
			var lat latencies
			links := 0
			for b.Loop() {
				ids := make([]string, n)
				for i := range ids {
					ids[i] = g.ids[r.IntN(len(g.ids))]
				}
				lat.time(func() {
					resp, err := g.rs.GetLinks(storagetest.Operator(), &aimemoryv1.GetLinksRequest{Ids: ids, Direction: aimemoryv1.Direction_DIRECTION_OUT, IncludeNodes: true})
					if err != nil {
						b.Fatal(err)
					}
					links += len(resp.Links)
				})
			}
			lat.report(b)
			b.ReportMetric(float64(links)/float64(len(lat)), "links/op")
		})
	}
}

// BenchmarkGraphTimeline1k is the timeline of the hub's 1k links.
func BenchmarkGraphTimeline1k(b *testing.B) {
	g := loadGraphBench(b)
	for _, limit := range []uint32{200, 1000} {
		b.Run(fmt.Sprint("limit", limit), func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				lat.time(func() {
					if _, err := g.rs.LinkTimeline(storagetest.Operator(), &aimemoryv1.LinkTimelineRequest{SourceId: g.hub, Limit: limit}); err != nil {
						b.Fatal(err)
					}
				})
			}
			lat.report(b)
		})
	}
}

// BenchmarkGraphTraverse is a kg_query walk (storagetest.BenchTraverse).
func BenchmarkGraphTraverse(b *testing.B) {
	g := loadGraphBench(b)
	storagetest.BenchTraverse(b, g.rs, g.ids)
}
