package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/sdk/procstat"
)

// BenchmarkCallOverMCP measures the per-call latency of four calls over
// MCP with a real client (mcp-go's, over stdio), on 2,000 memories:
//   - capabilities: memory_capabilities {family}, answered by the host
//     alone: the floor of any call;
//   - get, search, recall: host → plugin → engine, no write (recall
//     touches what it returns);
//   - store: the same plus one fsynced commit.
//
// The difference between get and capabilities is what the two gRPC hops
// and their encoding cost.
func BenchmarkCallOverMCP(b *testing.B) {
	e := newEnv(b)
	s := startMCPClient(b, "ai-memory", e.binDir+"/ai-memory", e.environ(), "", "mcp")
	s.pids = func() []int {
		return append(append([]int{s.pid}, childrenOf(s.pid, "ai-memory-")...), e.enginePids()...)
	}
	s.roles = map[string]func() []int{ // each process's share of cpu-us/call
		"host":    func() []int { return []int{s.pid} },
		"plugins": func() []int { return childrenOf(s.pid, "ai-memory-") },
		"engine":  e.enginePids,
	}
	var ids []string
	for i := range 2000 {
		ids = append(ids, storedID(b, s.call(b, "memory_store", benchMemory(i))))
	}
	calls := []struct {
		name string
		args func(i int) (string, map[string]any)
	}{
		{"capabilities", func(int) (string, map[string]any) {
			return "memory_capabilities", map[string]any{"family": "core"}
		}},
		{"get", func(i int) (string, map[string]any) {
			return "memory_get", map[string]any{"id": ids[i%len(ids)]}
		}},
		{"search", func(i int) (string, map[string]any) {
			return "memory_search", map[string]any{"query": benchQuery(i), "limit": 10}
		}},
		{"recall", func(i int) (string, map[string]any) {
			return "memory_recall", map[string]any{"context": benchQuery(i), "limit": 10}
		}},
		{"store", func(i int) (string, map[string]any) {
			return "memory_store", benchMemory(100000 + i)
		}},
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			samples, cpu := s.measure(b, func(i int) (string, map[string]any) { return c.args(i) })
			benchutil.ReportPercentiles(b, samples, "call")
			b.ReportMetric(cpu, "cpu-us/call")
		})
	}
}

var benchWords = strings.Fields("deploy pipeline release friday build cache test flaky database index query latency memory agent session token budget schema profile plugin engine socket")

// benchMemory is the i-th memory of a benchmark's corpus, as memory_store arguments.
func benchMemory(i int) map[string]any {
	w := benchWords
	return map[string]any{
		"title":   fmt.Sprintf("note %d on %s", i, w[i%len(w)]),
		"content": fmt.Sprintf("%s %s %s note %d about %s and %s", w[i%len(w)], w[(i*7)%len(w)], w[(i*13)%len(w)], i, w[(i*3)%len(w)], w[(i*11)%len(w)]),
	}
}

func benchQuery(i int) string {
	return benchWords[i%len(benchWords)] + " " + benchWords[(i*5)%len(benchWords)]
}

func storedID(b *testing.B, text string) string {
	var r struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil || r.ID == "" {
		b.Fatalf("store result has no id: %.200s", text)
	}
	return r.ID
}

// mcpClient is an MCP server process driven by mcp-go's stdio client: the
// same client for ai-memory and for the peers it is compared with.
type mcpClient struct {
	name string
	c    *client.Client
	pid  int
	pids func() []int // the server's processes, whose CPU time measure reports
	// roles, if set, name groups of those processes: measure also reports
	// each group's CPU per call (<role>-cpu-us/call).
	roles map[string]func() []int
}

// startMCPClient starts command (in dir, if not "") and initializes a session.
func startMCPClient(b *testing.B, name, command string, env []string, dir string, args ...string) *mcpClient {
	b.Helper()
	var started *exec.Cmd
	for _, k := range []string{proctune.ProfileDirEnv, proctune.ProfileSecondsEnv, proctune.ProfileAfterEnv} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v) // profile the processes (see internal/proctune/profile.go)
		}
	}
	for _, k := range []string{"GOMAXPROCS", "GOGC"} {
		if v := os.Getenv("AI_MEMORY_BENCH_" + k); v != "" {
			env = append(env, k+"="+v) // the servers', not this client's
		}
	}
	tr := transport.NewStdioWithOptions(command, env, args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir = env, dir
			started = cmd
			return cmd, nil
		}))
	c := client.NewClient(tr)
	if err := c.Start(context.Background()); err != nil {
		b.Fatalf("start %s: %v", name, err)
	}
	b.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		b.Fatalf("initialize %s: %v", name, err)
	}
	m := &mcpClient{name: name, c: c, pid: started.Process.Pid}
	m.pids = func() []int { return []int{m.pid} }
	return m
}

// call runs a tool that must succeed and returns its text.
func (m *mcpClient) call(b *testing.B, tool string, args map[string]any) string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		b.Fatalf("%s %s: %v", m.name, tool, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	if res.IsError {
		b.Fatalf("%s %s: %.300s", m.name, tool, sb.String())
	}
	return sb.String()
}

// measure times calls one at a time, after 50 unmeasured warm-up calls,
// for as long as b.Loop runs, and returns the latencies and the CPU time
// the server's processes spent per call, in µs (a figure that other load on
// the machine disturbs far less than latency).
func (m *mcpClient) measure(b *testing.B, next func(i int) (string, map[string]any)) ([]time.Duration, float64) {
	i := 0
	for range 50 {
		tool, args := next(i)
		m.call(b, tool, args)
		i++
	}
	var samples []time.Duration
	pids := m.pids()
	cpu0 := procstat.CPU(pids...)
	roles := map[string][]int{}
	roleCPU0 := map[string]time.Duration{}
	roleSw0 := map[string]int64{}
	for r, f := range m.roles {
		roles[r] = f()
		roleCPU0[r] = procstat.CPU(roles[r]...)
		roleSw0[r] = procstat.Sleeps(roles[r]...)
	}
	for b.Loop() {
		tool, args := next(i)
		start := time.Now()
		m.call(b, tool, args)
		samples = append(samples, time.Since(start))
		i++
	}
	n := float64(max(1, len(samples)))
	for r, ps := range roles {
		b.ReportMetric(float64((procstat.CPU(ps...)-roleCPU0[r]).Microseconds())/n, r+"-cpu-us/call")
		b.ReportMetric(float64(procstat.Sleeps(ps...)-roleSw0[r])/n, r+"-sleeps/call")
	}
	return samples, float64((procstat.CPU(pids...) - cpu0).Microseconds()) / n
}
