package graphfamily

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The benchmarks run the tools as the host calls them (the Family server)
// over a real engine reached by gRPC on a unix socket: everything but the
// host's MCP hop. The graph is 10k memories and 50k random links (out-degree
// 5 on average, cycles everywhere), plus a hub with 1k outbound links for
// the timeline; it is seeded once per run through the Engine API.

const (
	benchMemories = 10_000
	benchLinks    = 50_000
	benchHubLinks = 1_000
)

type benchGraph struct {
	srv aimemoryv1.FamilyServer
	ids []string
	hub string
}

// seed writes the graph with a few concurrent writers.
func seed(eng wire.Engine) (*benchGraph, error) {
	ctx := context.Background()
	g := &benchGraph{ids: make([]string, benchMemories)}
	var err error
	if g.srv, err = sdktest.Server("graph", "bench", Families(eng)); err != nil {
		return nil, err
	}
	parallel := func(n int, f func(i int) error) error {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 8 {
					if err := f(i); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	err = parallel(benchMemories, func(i int) error {
		resp, err := eng.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
			Title: fmt.Sprintf("node %d", i), Content: fmt.Sprintf("memory number %d of the graph benchmark", i),
			Namespace: fmt.Sprintf("bench/p%d", i%20), Tier: "long", Confidence: 1,
		}})
		if err == nil {
			g.ids[i] = resp.GetMemory().GetId()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(7, 7))
	type edge struct{ a, b, rel int }
	var edges []edge
	for len(edges) < benchLinks {
		a, b := r.IntN(benchMemories), r.IntN(benchMemories)
		if a != b {
			edges = append(edges, edge{a, b, r.IntN(len(record.Relations))})
		}
	}
	g.hub = g.ids[0]
	for i := range benchHubLinks {
		edges = append(edges, edge{0, 1 + i, 0})
	}
	err = parallel(len(edges), func(i int) error {
		e := edges[i]
		_, err := eng.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: g.ids[e.a], TargetId: g.ids[e.b], Relation: record.Relations[e.rel]})
		return err
	})
	return g, err
}

func (g *benchGraph) run(b *testing.B, tool string, args func(r *rand.Rand) string) {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	var lat []time.Duration
	var size int
	for b.Loop() {
		req := &aimemoryv1.CallRequest{Tool: tool, ArgumentsJson: []byte(args(r)), Context: &aimemoryv1.CallContext{AgentId: "ai:bench"}}
		start := time.Now()
		resp, err := g.srv.Call(ctx, req)
		lat = append(lat, time.Since(start))
		if err != nil || resp.GetIsError() {
			b.Fatalf("%s: %v %s", tool, err, resp.GetText())
		}
		size += len(resp.GetText())
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(size)/float64(len(lat)), "result-bytes")
}

// BenchmarkGraph: kg_query from a random memory at depth 1, 3 and 5 with
// the default limit (200), and depth 5 with the largest (1000); the
// timeline of the hub's 1k links (the default limit, 200 events, then all).
func BenchmarkGraph(b *testing.B) {
	start := time.Now()
	g, err := seed(sdktest.StartEngine(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d memories and %d links in %v", benchMemories, benchLinks+benchHubLinks, time.Since(start))
	for _, c := range []struct{ depth, limit int }{{1, 200}, {3, 200}, {5, 200}, {5, 1000}} {
		b.Run(fmt.Sprintf("kg_query/depth%d/limit%d", c.depth, c.limit), func(b *testing.B) {
			g.run(b, "memory_kg_query", func(r *rand.Rand) string {
				return jsonArgs("source_id", g.ids[r.IntN(len(g.ids))], "max_depth", c.depth, "limit", c.limit)
			})
		})
	}
	for _, limit := range []int{200, 1000} {
		b.Run(fmt.Sprintf("kg_timeline/1k/limit%d", limit), func(b *testing.B) {
			g.run(b, "memory_kg_timeline", func(*rand.Rand) string { return jsonArgs("source_id", g.hub, "limit", limit) })
		})
	}
}
