package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/sdk/procstat"
)

// BenchmarkGraphOverMCP measures the graph tools end to end: client → host
// → graph plugin → engine (one Traverse call a query) → back, on 10k
// memories with 50k random links (out-degree 5 on average, cycles
// everywhere) and a hub with 1k outbound links. The graph is seeded over
// MCP by four hosts at once (one engine), then one host answers the calls.
func BenchmarkGraphOverMCP(b *testing.B) {
	const memories, links, hubLinks = 10_000, 50_000, 1_000
	e := newEnv(b)
	for _, k := range []string{proctune.ProfileDirEnv, proctune.ProfileSecondsEnv, proctune.ProfileAfterEnv} {
		if v := os.Getenv(k); v != "" {
			e.extra = append(e.extra, k+"="+v) // profile the processes (see internal/proctune/profile.go)
		}
	}
	// AI_MEMORY_BENCH_GRAPH_SEED names a directory keeping the seeded data
	// dir's files and the ids, so that A/B runs of several builds skip the
	// minute of seeding and query the same graph.
	seedDir := os.Getenv("AI_MEMORY_BENCH_GRAPH_SEED")
	if os.Getenv(envBackend) == "postgres" {
		seedDir = ""
	}
	var s *rawSession
	ids, ok := loadGraphSeed(b, seedDir, e.dataDir)
	if !ok {
		ids, s = seedGraph(b, e, memories, links, hubLinks)
		saveGraphSeed(b, seedDir, e.dataDir, ids)
	} else {
		s = e.startRaw("--profile", "graph")
	}
	calls := &graphCalls{}
	call, check := calls.call, func() { calls.check(b) }
	call(s, "memory_kg_query", map[string]any{"source_id": ids[0]}) // starts the graph plugin
	check()
	// The CPU time of each process per call (host, graph plugin, engine):
	// a figure other load on the machine disturbs far less than latency.
	procs := []struct {
		name string
		pids []int
	}{
		{"host", []int{s.cmd.Process.Pid}},
		{"plugin", childrenOf(s.cmd.Process.Pid, "ai-memory-graph")},
		{"engine", e.enginePids()},
	}

	bench := func(name string, args func(r *rand.Rand) map[string]any, tool string) {
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var samples []time.Duration
			var sizes []int
			var bytes int
			cpu0 := make([]time.Duration, len(procs))
			for i, p := range procs {
				cpu0[i] = procstat.CPU(p.pids...)
			}
			for b.Loop() {
				a := args(r)
				t0 := time.Now()
				text, _ := toolResult(call(s, tool, a))
				samples = append(samples, time.Since(t0))
				sizes = append(sizes, len(text))
				bytes += len(text)
			}
			check()
			saveGraphSamples(b, name, samples, sizes)
			benchutil.ReportPercentiles(b, samples, "call")
			n := float64(max(1, len(samples)))
			var total time.Duration
			for i, p := range procs {
				d := procstat.CPU(p.pids...) - cpu0[i]
				total += d
				b.ReportMetric(float64(d.Microseconds())/n, p.name+"-cpu-us/call")
			}
			b.ReportMetric(float64(total.Microseconds())/n, "cpu-us/call")
			b.ReportMetric(float64(bytes)/n, "result-B/call")
		})
	}
	for _, depth := range []int{1, 3, 5} {
		bench(fmt.Sprintf("kg_query/depth%d", depth), func(r *rand.Rand) map[string]any {
			return map[string]any{"source_id": ids[r.IntN(memories)], "max_depth": depth}
		}, "memory_kg_query")
	}
	bench("kg_timeline/1k", func(*rand.Rand) map[string]any {
		return map[string]any{"source_id": ids[0]}
	}, "memory_kg_timeline")
}

// saveGraphSamples writes each call's latency and result size (one
// "µs bytes" line per call, in call order) to the file
// AI_MEMORY_BENCH_GRAPH_SAMPLES names, suffixed with the sub-benchmark:
// what tells a slow call of a large answer from one of a stall.
func saveGraphSamples(b *testing.B, name string, samples []time.Duration, sizes []int) {
	path := os.Getenv("AI_MEMORY_BENCH_GRAPH_SAMPLES")
	if path == "" {
		return
	}
	var buf []byte
	for i, d := range samples {
		buf = fmt.Appendf(buf, "%d %d\n", d.Microseconds(), sizes[i])
	}
	if err := os.WriteFile(path+"."+strings.ReplaceAll(name, "/", "-"), buf, 0o600); err != nil {
		b.Fatal(err)
	}
}

// seedGraph stores memories over MCP with four hosts at once, links them
// at random (out-degree links/memories on average) and gives ids[0]
// hubLinks more, then closes all hosts but the one it returns.
func seedGraph(b *testing.B, e *env, memories, links, hubLinks int) (ids []string, _ *rawSession) {
	start := time.Now()
	const writers = 4
	sessions := make([]*rawSession, writers)
	for i := range sessions {
		sessions[i] = e.startRaw("--profile", "graph")
	}
	calls := &graphCalls{}
	call, check := calls.call, func() { calls.check(b) }
	ids = make([]string, memories)
	parallel := func(n int, f func(s *rawSession, i int)) {
		var wg sync.WaitGroup
		for w, s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += writers {
					f(s, i)
				}
			}()
		}
		wg.Wait()
	}
	parallel(memories, func(s *rawSession, i int) {
		resp := call(s, "memory_store", map[string]any{"title": fmt.Sprintf("node %d", i),
			"content": fmt.Sprintf("memory number %d of the graph benchmark", i), "namespace": fmt.Sprintf("bench/p%d", i%20), "tier": "long"})
		ids[i] = jsonField(resp, "id")
	})
	check()
	r := rand.New(rand.NewPCG(7, 7))
	relations := []string{"related_to", "supersedes", "contradicts", "derived_from"}
	type edge struct{ a, b, rel int }
	var edges []edge
	for len(edges) < links {
		if a, c := r.IntN(memories), r.IntN(memories); a != c {
			edges = append(edges, edge{a, c, r.IntN(4)})
		}
	}
	for i := range hubLinks {
		edges = append(edges, edge{0, 1 + i, 0})
	}
	parallel(len(edges), func(s *rawSession, i int) {
		call(s, "memory_link", map[string]any{"source_id": ids[edges[i].a], "target_id": ids[edges[i].b], "relation": relations[edges[i].rel]})
	})
	check()
	b.Logf("seeded %d memories and %d links over MCP in %v", memories, len(edges), time.Since(start))
	for _, w := range sessions[1:] { // only one client while measuring
		w.kill()
	}
	return ids, sessions[0]
}

func loadGraphSeed(b *testing.B, seedDir, dataDir string) ([]string, bool) {
	if seedDir == "" {
		return nil, false
	}
	raw, err := os.ReadFile(filepath.Join(seedDir, "ids.json"))
	if err != nil {
		return nil, false
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		b.Fatal(err)
	}
	for _, f := range []string{"memory.db", "engine.key"} {
		copyFile(b, filepath.Join(seedDir, f), filepath.Join(dataDir, f))
	}
	b.Logf("graph seed from %s", seedDir)
	return ids, true
}

// saveGraphSeed keeps the data dir's files (the engine is idle: every
// write was acknowledged, so committed) and the ids.
func saveGraphSeed(b *testing.B, seedDir, dataDir string, ids []string) {
	if seedDir == "" {
		return
	}
	for _, f := range []string{"memory.db", "engine.key"} {
		copyFile(b, filepath.Join(dataDir, f), filepath.Join(seedDir, f))
	}
	raw, _ := json.Marshal(ids)
	if err := os.WriteFile(filepath.Join(seedDir, "ids.json"), raw, 0o600); err != nil {
		b.Fatal(err)
	}
}

// jsonField reads a string field of a tool's JSON result.
func jsonField(resp map[string]any, key string) string {
	text, _ := toolResult(resp)
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return ""
	}
	s, _ := v[key].(string)
	return s
}

// graphCalls makes tool calls from several goroutines and keeps the first
// failure, for the benchmark's goroutine to report (b.Fatal must not run
// on another).
type graphCalls struct {
	once    sync.Once
	failure string
}

func (g *graphCalls) call(s *rawSession, tool string, args map[string]any) map[string]any {
	resp, err := s.tryRequest("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		g.once.Do(func() { g.failure = fmt.Sprintf("%s %v: %v", tool, args, err) })
	} else if text, isErr := toolResult(resp); isErr || text == "" {
		g.once.Do(func() { g.failure = fmt.Sprintf("%s %v: %v", tool, args, resp) })
	}
	return resp
}

func (g *graphCalls) check(b *testing.B) {
	b.Helper()
	if g.failure != "" {
		b.Fatal(g.failure)
	}
}
