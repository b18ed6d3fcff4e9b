package graphfamily

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The reference traversal: deliberately simple and separate from the code
// under test. Edges are plain structs read back from the engine unfiltered;
// validity, observer and relation are decided here; reachability is
// level-by-level relaxation over the whole edge list.

type refInterval struct {
	from, until int64
	by          string
}

type refEdge struct {
	src, dst, rel string
	ivs           []refInterval // every validity interval, current last
}

type refQuery struct {
	source    string
	dir       string // out, in, both
	rel       string // "" = any
	at        int64  // 0 = any time (the current interval)
	observers []string
	anyone    bool
	maxDepth  int
}

// passes reports whether e may be walked under q.
func (q refQuery) passes(e refEdge) bool {
	if q.rel != "" && e.rel != q.rel {
		return false
	}
	var iv *refInterval
	if q.at == 0 {
		iv = &e.ivs[len(e.ivs)-1]
	} else {
		for i := range e.ivs {
			c := e.ivs[i]
			if c.from != 0 && c.from <= q.at && (c.until == 0 || q.at < c.until) {
				iv = &e.ivs[i]
			}
		}
	}
	if iv == nil {
		return false
	}
	return q.anyone || slices.Contains(q.observers, iv.by)
}

// step reports whether e leads from u to v under q's direction.
func (q refQuery) step(e refEdge, u, v string) bool {
	return (q.dir != "in" && e.src == u && e.dst == v) || (q.dir != "out" && e.dst == u && e.src == v)
}

// refDepths is every node reachable from q.source within q.maxDepth hops,
// with its hop distance.
func refDepths(edges []refEdge, q refQuery) map[string]int {
	depth := map[string]int{q.source: 0}
	for k := 0; k < q.maxDepth; k++ {
		for _, e := range edges {
			if !q.passes(e) {
				continue
			}
			for _, uv := range [][2]string{{e.src, e.dst}, {e.dst, e.src}} {
				u, v := uv[0], uv[1]
				if d, ok := depth[u]; ok && d == k && q.step(e, u, v) {
					if _, seen := depth[v]; !seen {
						depth[v] = k + 1
					}
				}
			}
		}
	}
	delete(depth, q.source)
	return depth
}

// readEdges reads every link of the given memories back from the engine.
func readEdges(t *testing.T, h *harness, ids []string) []refEdge {
	t.Helper()
	resp, err := h.eng.GetLinks(context.Background(), &aimemoryv1.GetLinksRequest{Ids: ids, Direction: aimemoryv1.Direction_DIRECTION_OUT})
	if err != nil {
		t.Fatal(err)
	}
	var out []refEdge
	for _, l := range resp.GetLinks() {
		e := refEdge{src: l.GetSourceId(), dst: l.GetTargetId(), rel: l.GetRelation()}
		for _, hv := range l.GetHistory() {
			e.ivs = append(e.ivs, refInterval{hv.GetValidFrom(), hv.GetValidUntil(), hv.GetObservedBy()})
		}
		e.ivs = append(e.ivs, refInterval{l.GetValidFrom(), l.GetValidUntil(), l.GetObservedBy()})
		out = append(out, e)
	}
	return out
}

// queryRow is one node of a memory_kg_query result.
type queryRow struct {
	ID         string   `json:"id"`
	Depth      int      `json:"depth"`
	Relation   string   `json:"relation"`
	Dir        string   `json:"dir"`
	Title      string   `json:"title"`
	Via        []string `json:"via"`
	ValidFrom  string   `json:"valid_from"`
	ValidUntil string   `json:"valid_until"`
	ObservedBy string   `json:"observed_by"`
}

type queryOut struct {
	Count     int        `json:"count"`
	Nodes     []queryRow `json:"nodes"`
	Truncated bool       `json:"truncated"`
}

func (q refQuery) args(limit int) string {
	kv := []any{"source_id", q.source, "max_depth", q.maxDepth, "direction", q.dir, "limit", limit}
	if q.rel != "" {
		kv = append(kv, "relation", q.rel)
	}
	if q.at != 0 {
		kv = append(kv, "valid_at", record.FormatTime(q.at))
	}
	if !q.anyone {
		kv = append(kv, "allowed_agents", q.observers)
	}
	return jsonArgs(kv...)
}

// check runs q through memory_kg_query and compares it with the reference:
// the same nodes at the same depths (all of them, or, under a limit, a
// prefix of the depth order), each once, each with a real path.
func check(t *testing.T, h *harness, edges []refEdge, q refQuery, limit int) {
	t.Helper()
	want := refDepths(edges, q)
	var got queryOut
	h.OK("memory_kg_query", q.args(limit), &got)
	desc := fmt.Sprintf("%s limit %d", q.args(limit), limit)
	if got.Count != len(got.Nodes) {
		t.Fatalf("%s: count %d for %d nodes", desc, got.Count, len(got.Nodes))
	}
	if len(want) <= limit {
		if len(got.Nodes) != len(want) || got.Truncated {
			t.Fatalf("%s: %d nodes (truncated %v), reference %d", desc, len(got.Nodes), got.Truncated, len(want))
		}
	} else if len(got.Nodes) != limit || !got.Truncated {
		t.Fatalf("%s: %d nodes (truncated %v), want the limit %d of %d", desc, len(got.Nodes), got.Truncated, limit, len(want))
	}
	seen := map[string]bool{}
	perDepth := map[int]int{}
	last := 0
	for _, r := range got.Nodes {
		if seen[r.ID] || r.ID == q.source {
			t.Fatalf("%s: node %s twice or the source", desc, r.ID)
		}
		seen[r.ID] = true
		d, ok := want[r.ID]
		if !ok || d != r.Depth {
			t.Fatalf("%s: node %s at depth %d, reference %d (reachable %v)", desc, r.ID, r.Depth, d, ok)
		}
		if r.Depth < last {
			t.Fatalf("%s: depth order broken at %s", desc, r.ID)
		}
		last = r.Depth
		perDepth[r.Depth]++
		path := append(append([]string{q.source}, r.Via...), r.ID)
		if len(path) != r.Depth+1 {
			t.Fatalf("%s: node %s at depth %d has path %v", desc, r.ID, r.Depth, path)
		}
		for i := 1; i < len(path); i++ {
			u, v := path[i-1], path[i]
			if i < len(path)-1 && want[v] != i {
				t.Fatalf("%s: path %v of %s goes through %s at hop %d, reference depth %d", desc, path, r.ID, v, i, want[v])
			}
			found := false
			for _, e := range edges {
				if q.passes(e) && q.step(e, u, v) && (i < len(path)-1 || e.rel == r.Relation) {
					found = true
				}
			}
			if !found {
				t.Fatalf("%s: no walkable %s link %s→%s on the path of %s", desc, r.Relation, u, v, r.ID)
			}
		}
		if (q.dir == "both") != (r.Dir != "") {
			t.Fatalf("%s: dir %q", desc, r.Dir)
		}
	}
	// Under a limit, every depth before the last one shown is complete.
	refPerDepth := map[int]int{}
	for _, d := range want {
		refPerDepth[d]++
	}
	for d := 1; d < last; d++ {
		if perDepth[d] != refPerDepth[d] {
			t.Fatalf("%s: %d nodes at depth %d, reference %d", desc, perDepth[d], d, refPerDepth[d])
		}
	}
}

// TestTraversalMatchesReference builds random graphs full of cycles, with
// links invalidated and revived by several agents, and checks hundreds of
// queries (every direction, depth, relation, point in time, observer set
// and limit) against the reference traversal.
func TestTraversalMatchesReference(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			h := newHarness(t)
			r := rand.New(rand.NewPCG(seed, 42))
			const n = 36
			var ids []string
			for i := range n {
				ids = append(ids, h.memory(fmt.Sprint("node ", i), "g"))
			}
			agents := []string{"ai:a", "ai:b", "ai:c"}
			link := func(src, dst, rel string) {
				h.AgentID = agents[r.IntN(len(agents))]
				h.OK("memory_link", jsonArgs("source_id", src, "target_id", dst, "relation", rel), nil)
			}
			// A ring (a cycle through everything), its reverse on a few
			// nodes, and random chords.
			for i := range n {
				link(ids[i], ids[(i+1)%n], "related_to")
			}
			for i := range 6 {
				link(ids[(i+1)%n], ids[i], "supersedes")
			}
			var checkpoints []int64
			for range 90 {
				a, b := r.IntN(n), r.IntN(n)
				if a == b {
					continue
				}
				link(ids[a], ids[b], record.Relations[r.IntN(len(record.Relations))])
			}
			checkpoints = append(checkpoints, time.Now().UnixNano())
			// Invalidate some links now and some at an instant in the
			// past, revive some, invalidate some of those in the future.
			edges := readEdges(t, h, ids)
			r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
			for i, e := range edges[:40] {
				args := []any{"source_id", e.src, "target_id", e.dst, "relation", e.rel}
				if i%3 == 0 {
					args = append(args, "valid_until", record.FormatTime(e.ivs[0].from+int64(time.Microsecond)))
				}
				h.OK("memory_kg_invalidate", jsonArgs(args...), nil)
			}
			time.Sleep(time.Millisecond)
			checkpoints = append(checkpoints, time.Now().UnixNano())
			for _, e := range edges[:20] {
				link(e.src, e.dst, e.rel)
			}
			for _, e := range edges[:5] {
				h.OK("memory_kg_invalidate", jsonArgs("source_id", e.src, "target_id", e.dst, "relation", e.rel,
					"valid_until", record.FormatTime(time.Now().Add(time.Hour).UnixNano())), nil)
			}
			time.Sleep(time.Millisecond)
			checkpoints = append(checkpoints, time.Now().UnixNano(), time.Now().Add(2*time.Hour).UnixNano(), edges[0].ivs[0].from)

			edges = readEdges(t, h, ids)
			revived := 0
			for _, e := range edges {
				if len(e.ivs) > 1 {
					revived++
				}
			}
			if revived == 0 {
				t.Fatal("no link was revived: the generator is broken")
			}
			// Interval boundaries are instants too: start inclusive, end exclusive.
			for _, e := range edges[:30] {
				for _, iv := range e.ivs {
					checkpoints = append(checkpoints, iv.from)
					if iv.until != 0 {
						checkpoints = append(checkpoints, iv.until, iv.until-1)
					}
				}
			}
			for i := range 400 {
				q := refQuery{
					source:   ids[r.IntN(n)],
					dir:      []string{"out", "in", "both"}[r.IntN(3)],
					maxDepth: 1 + r.IntN(5),
					anyone:   true,
				}
				if r.IntN(3) == 0 {
					q.rel = record.Relations[r.IntN(len(record.Relations))]
				}
				if r.IntN(2) == 0 {
					q.at = checkpoints[r.IntN(len(checkpoints))]
				}
				if r.IntN(4) == 0 {
					q.anyone = false
					q.observers = agents[:r.IntN(len(agents))] // sometimes none: trust no one
				}
				limit := 1000
				if i%5 == 0 {
					limit = 1 + r.IntN(12)
				}
				check(t, h, edges, q, limit)
			}
		})
	}
}

// TestPointInTimeAcrossInvalidationAndRevival walks a chain a→b→c whose
// first link is invalidated and later revived, asking at each instant.
func TestPointInTimeAcrossInvalidationAndRevival(t *testing.T) {
	h := newHarness(t)
	a, b, c := h.memory("a", "t"), h.memory("b", "t"), h.memory("c", "t")
	tick := func() int64 {
		time.Sleep(2 * time.Millisecond)
		return time.Now().UnixNano()
	}
	before := tick()
	var l1 linkResult
	h.OK("memory_link", jsonArgs("source_id", a, "target_id", b, "relation", "supersedes"), &l1)
	h.OK("memory_link", jsonArgs("source_id", b, "target_id", c), nil)
	valid1 := tick()
	h.OK("memory_kg_invalidate", jsonArgs("source_id", a, "target_id", b, "relation", "supersedes"), nil)
	invalid := tick()
	h.AgentID = "ai:reviver"
	var l2 linkResult
	h.OK("memory_link", jsonArgs("source_id", a, "target_id", b, "relation", "supersedes"), &l2)
	if !l2.Revived || l2.ValidFrom <= l1.ValidFrom {
		t.Fatalf("revive = %+v after %+v", l2, l1)
	}
	valid2 := tick()

	reach := func(at int64) []string {
		args := []any{"source_id", a, "max_depth", 2}
		if at != 0 {
			args = append(args, "valid_at", record.FormatTime(at))
		}
		var out queryOut
		h.OK("memory_kg_query", jsonArgs(args...), &out)
		var titles []string
		for _, n := range out.Nodes {
			titles = append(titles, fmt.Sprintf("%s@%d by %s", n.Title, n.Depth, n.ObservedBy))
		}
		return titles
	}
	for _, tc := range []struct {
		name string
		at   int64
		want []string
	}{
		{"before the link", before, nil},
		{"first interval", valid1, []string{"b@1 by ai:test", "c@2 by ai:test"}},
		{"invalidated", invalid, nil},
		{"revived", valid2, []string{"b@1 by ai:reviver", "c@2 by ai:test"}},
		{"now (no valid_at)", 0, []string{"b@1 by ai:reviver", "c@2 by ai:test"}},
	} {
		if got := reach(tc.at); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// The timeline shows both intervals of a→b, the first one closed.
	var tl struct {
		Count  int       `json:"count"`
		Events []linkRow `json:"events"`
	}
	h.OK("memory_kg_timeline", jsonArgs("source_id", a), &tl)
	if tl.Count != 2 || tl.Events[0].ValidUntil == "" || tl.Events[0].InvalidatedBy != "ai:test" ||
		tl.Events[1].ValidUntil != "" || tl.Events[1].ObservedBy != "ai:reviver" || tl.Events[1].CreatedAt != tl.Events[0].ValidFrom {
		t.Fatalf("timeline = %+v", tl)
	}
}

// countingEngine counts the engine calls a query makes (Traverse, and
// GetLinks, which a query no longer needs), and the id resolutions
// (GetMemories).
type countingEngine struct {
	wire.Engine
	calls, traversals, resolves int
}

func (c *countingEngine) GetMemories(ctx context.Context, req *aimemoryv1.GetMemoriesRequest, opts ...grpc.CallOption) (*aimemoryv1.GetMemoriesResponse, error) {
	c.resolves++
	return c.Engine.GetMemories(ctx, req, opts...)
}

func (c *countingEngine) GetLinks(ctx context.Context, req *aimemoryv1.GetLinksRequest, opts ...grpc.CallOption) (*aimemoryv1.GetLinksResponse, error) {
	c.calls++
	return c.Engine.GetLinks(ctx, req, opts...)
}

func (c *countingEngine) Traverse(ctx context.Context, req *aimemoryv1.TraverseRequest, opts ...grpc.CallOption) (*aimemoryv1.TraverseResponse, error) {
	c.traversals++
	return c.Engine.Traverse(ctx, req, opts...)
}

// TestQueryCostsOneEngineCall: a kg_query of any depth is one engine call
// (the walk runs in the engine), whatever the fan-out; it reports each
// node once, cycles included.
func TestQueryCostsOneEngineCall(t *testing.T) {
	h := newHarness(t)
	// A complete binary tree of depth 4 plus back edges (cycles).
	ids := []string{h.memory("n0", "t")}
	for i := 1; i < 31; i++ {
		ids = append(ids, h.memory(fmt.Sprint("n", i), "t"))
		h.OK("memory_link", jsonArgs("source_id", ids[(i-1)/2], "target_id", ids[i]), nil)
		h.OK("memory_link", jsonArgs("source_id", ids[i], "target_id", ids[0], "relation", "derived_from"), nil)
	}
	c := &countingEngine{Engine: h.eng}
	f := sdktest.NewFamily(t, "graph", Families(c)).WithEngine(h.Engine)
	for depth := 1; depth <= 5; depth++ {
		c.calls, c.traversals = 0, 0
		var out queryResult
		f.OK("memory_kg_query", jsonArgs("source_id", ids[0], "max_depth", depth, "limit", 1000), &out)
		wantNodes := min(1<<(depth+1)-2, 30) // the fifth level finds only visited nodes
		if c.traversals != 1 || c.calls != 0 || out.Count != wantNodes {
			t.Errorf("depth %d: %d traversals and %d link reads, %d nodes; want 1, 0, %d", depth, c.traversals, c.calls, out.Count, wantNodes)
		}
	}
}
