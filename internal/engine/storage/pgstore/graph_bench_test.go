package pgstore

import (
	"fmt"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The graph reads on 10k memories with 50k random links and a hub with 1k
// outbound links, bulk-loaded, as boltstore's graph_bench_test.go measures
// them (BenchmarkGraphFrontier there is the same request), plus a
// kg_query-style walk: three levels out from one memory, each level one
// GetLinks of the previous level's new far ends.
//
//	go test ./internal/engine/storage/pgstore -run '^$' -bench Graph -benchtime 200x

type pgGraphBench struct {
	s   *Store
	rs  *records.Store // what the engine serves
	ids []string
}

// loadPGGraph loads the graph into a fresh store, closed when b ends.
func loadPGGraph(b *testing.B) *pgGraphBench {
	b.Helper()
	var g *pgGraphBench
	{
		s := open(b, storage.Options{})
		g = &pgGraphBench{s: s, rs: records.New(s)}
		r := rand.New(rand.NewPCG(1, 2))
		err := s.write(storagetest.Operator(), func(w *writeTx) error {
			g.ids = g.ids[:0]
			for i := range 10_000 {
				in, policy, err := rules.NewStore(&aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("%s %d", benchText(r, 3), i), Content: benchText(r, 40), Confidence: 1, Tier: "long",
				}})
				if err != nil {
					return err
				}
				resp := &aimemoryv1.StoreMemoryResponse{}
				if err := ops.Store(opsTx{w}, in, policy, resp); err != nil {
					return err
				}
				g.ids = append(g.ids, resp.Memory.Id)
			}
			seen := map[string]bool{}
			var rows [][]any
			for i := 1; i <= 1000; i++ { // a hub: the first memory's 1k outbound links
				raw, err := encodeLink(&aimemoryv1.Link{SourceId: g.ids[0], TargetId: g.ids[i], Relation: "derived_from", CreatedAt: w.now, ValidFrom: w.now, ObservedBy: "ai:bench"})
				if err != nil {
					return err
				}
				seen[g.ids[0]+g.ids[i]+"derived_from"] = true
				rows = append(rows, []any{g.ids[0], g.ids[i], "derived_from", raw})
			}
			for len(rows) < 51_000 {
				a, c, rel := g.ids[r.IntN(len(g.ids))], g.ids[r.IntN(len(g.ids))], record.Relations[r.IntN(4)]
				if a == c || seen[a+c+rel] {
					continue
				}
				seen[a+c+rel] = true
				raw, err := encodeLink(&aimemoryv1.Link{SourceId: a, TargetId: c, Relation: rel, CreatedAt: w.now, ValidFrom: w.now, ObservedBy: "ai:bench"})
				if err != nil {
					return err
				}
				rows = append(rows, []any{a, c, rel, raw})
			}
			_, err := w.tx.CopyFrom(w.ctx, pgx.Identifier{"links"}, []string{"source_id", "target_id", "relation", "record"}, pgx.CopyFromRows(rows))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.pool.Exec(storagetest.Operator(), `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
	return g
}

type latencies []time.Duration

func (l *latencies) time(f func()) {
	start := time.Now()
	f()
	*l = append(*l, time.Since(start))
}

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)*50/100].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l[len(l)*95/100].Nanoseconds()), "p95-ns")
}

// BenchmarkGraph: frontier/n is one traversal level, the links of a
// frontier of n memories with the far ends' titles (n = 1, 25, 125: the
// levels of a depth-3 walk at out-degree 5); walk3 is a kg_query-style
// walk, depth 3 outward from a random memory, each level one GetLinks
// (with nodes) of the far ends not yet visited; traverse3 the same walk as
// one Traverse; timeline1k the first 200 events of the hub's timeline.
func BenchmarkGraph(b *testing.B) {
	g := loadPGGraph(b)
	for _, n := range []int{1, 25, 125} {
		b.Run(fmt.Sprint("frontier/", n), func(b *testing.B) {
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
	b.Run("walk3", func(b *testing.B) { benchWalk(b, g) })
	b.Run("traverse3", func(b *testing.B) { storagetest.BenchTraverse(b, g.rs, g.ids) })
	b.Run("timeline1k", func(b *testing.B) {
		var lat latencies
		for b.Loop() {
			lat.time(func() {
				if _, err := g.rs.LinkTimeline(storagetest.Operator(), &aimemoryv1.LinkTimelineRequest{SourceId: g.ids[0], Limit: 200}); err != nil {
					b.Fatal(err)
				}
			})
		}
		lat.report(b)
	})
}

func benchWalk(b *testing.B, g *pgGraphBench) {
	r := rand.New(rand.NewPCG(3, 3))
	var lat latencies
	links := 0
	for b.Loop() {
		lat.time(func() {
			frontier := []string{g.ids[r.IntN(len(g.ids))]}
			seen := map[string]bool{frontier[0]: true}
			for range 3 {
				if len(frontier) == 0 {
					break
				}
				resp, err := g.rs.GetLinks(storagetest.Operator(), &aimemoryv1.GetLinksRequest{Ids: frontier, Direction: aimemoryv1.Direction_DIRECTION_OUT, IncludeNodes: true})
				if err != nil {
					b.Fatal(err)
				}
				links += len(resp.Links)
				frontier = frontier[:0]
				for _, l := range resp.Links {
					if !seen[l.TargetId] {
						seen[l.TargetId] = true
						frontier = append(frontier, l.TargetId)
					}
				}
			}
		})
	}
	lat.report(b)
	b.ReportMetric(float64(links)/float64(len(lat)), "links/op")
}

// BenchmarkGraphPlans prints the plans of a frontier read's queries (run
// with -v when tuning; it measures nothing).
func BenchmarkGraphPlans(b *testing.B) {
	g := loadPGGraph(b)
	ids := g.ids[:125]
	for _, q := range []string{
		`SELECT id, title, namespace FROM memories WHERE id = ANY($1)`,
		`SELECT l.record, m.id, m.title, m.namespace, NULL::bytea FROM links l JOIN memories m ON m.id = l.target_id WHERE l.source_id = ANY($1) ORDER BY l.source_id, l.target_id, l.relation`,
	} {
		rows, err := g.s.pool.Query(storagetest.Operator(), `EXPLAIN (ANALYZE, BUFFERS) `+q, planArgs(q, ids)...)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var line string
			rows.Scan(&line)
			b.Log(line)
		}
		rows.Close()
	}
}

func planArgs(q string, ids []string) []any {
	if strings.Contains(q, "$2") {
		return []any{ids, ""}
	}
	return []any{ids}
}
