package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/testwait"
)

// BenchmarkInitialize measures spawn → initialize answered under core.
// warm: the engine runs and the plugin descriptions are cached.
// cold: a fresh data dir, so nothing runs and nothing is cached.
func BenchmarkInitialize(b *testing.B) {
	for _, mode := range []string{"warm", "cold"} {
		b.Run(mode, func(b *testing.B) {
			e := newEnv(b)
			if mode == "warm" {
				keep := e.startRaw() // keeps the engine up and the cache filled
				keep.request("tools/call", map[string]any{"name": "memory_list", "arguments": map[string]any{}})
			}
			var samples []time.Duration
			for b.Loop() {
				if mode == "cold" {
					e.dataDir = filepath.Join(b.TempDir(), "d")
				}
				start := time.Now()
				s := e.startRaw()
				samples = append(samples, time.Since(start))
				s.kill()
			}
			benchutil.ReportPercentiles(b, samples, "init")
		})
	}
}

// BenchmarkStoreOverMCP measures memory_store end to end: client → host →
// plugin → engine (one fsynced bbolt commit) → back; without an embedding
// model and with the local one loaded (each store is then embedded in the
// background, off the write path).
func BenchmarkStoreOverMCP(b *testing.B) {
	for _, mode := range []string{"keyword", "local-model"} {
		b.Run(mode, func(b *testing.B) {
			e := newEnv(b)
			if mode == "local-model" {
				e.withModel(b)
			}
			s := e.startRaw()
			var samples []time.Duration
			i := 0
			for b.Loop() {
				i++
				start := time.Now()
				resp := s.request("tools/call", map[string]any{"name": "memory_store", "arguments": map[string]any{
					"title": fmt.Sprintf("bench %d", i), "content": "a benchmark memory about deploy pipelines and friday releases"}})
				samples = append(samples, time.Since(start))
				if _, isErr := toolResult(resp); isErr {
					b.Fatalf("store failed: %v", resp)
				}
			}
			benchutil.ReportPercentiles(b, samples, "store")
			reportRSS(b, e, s.cmd.Process.Pid)
		})
	}
}

// BenchmarkRecallOverMCP measures recall and search end to end on 10k memories.
func BenchmarkRecallOverMCP(b *testing.B) {
	e := newEnv(b)
	s := e.startRaw()
	words := strings.Fields("deploy pipeline release friday build cache test flaky database index query latency memory agent session token budget schema profile plugin engine socket")
	for i := range 10000 {
		content := fmt.Sprintf("%s %s %s note %d about %s", words[i%len(words)], words[(i*7)%len(words)], words[(i*13)%len(words)], i, words[(i*3)%len(words)])
		resp := s.request("tools/call", map[string]any{"name": "memory_store", "arguments": map[string]any{"title": fmt.Sprintf("n%d", i), "content": content, "namespace": fmt.Sprintf("p%d", i%10)}})
		if _, isErr := toolResult(resp); isErr {
			b.Fatalf("seed: %v", resp)
		}
	}
	for _, tool := range []string{"memory_recall", "memory_search"} {
		b.Run(tool, func(b *testing.B) {
			var samples []time.Duration
			i := 0
			for b.Loop() {
				i++
				args := map[string]any{"limit": 10}
				q := words[i%len(words)] + " " + words[(i*5)%len(words)]
				if tool == "memory_recall" {
					args["context"] = q
				} else {
					args["query"] = q
				}
				start := time.Now()
				resp := s.request("tools/call", map[string]any{"name": tool, "arguments": args})
				samples = append(samples, time.Since(start))
				if _, isErr := toolResult(resp); isErr {
					b.Fatalf("%s: %v", tool, resp)
				}
			}
			benchutil.ReportPercentiles(b, samples, "call")
		})
	}
}

// reportRSS reports the memory of the host, its plugins and the engine as
// PSS (shared pages, such as the binary the host and engine both map, are
// split between the processes sharing them) and as private anonymous RSS.
func reportRSS(b *testing.B, e *env, hostPid int) {
	// Plugin binaries are named ai-memory-<family>; the engine ("ai-memory engine") is a child of the host too.
	pids := map[string][]int{"host": {hostPid}, "plugins": childrenOf(hostPid, "ai-memory-"), "engine": e.enginePids()}
	totalPss, totalAnon := 0.0, 0.0
	for name, list := range pids {
		pss, anon := 0.0, 0.0
		for _, pid := range list {
			pss += procKB(pid, "smaps_rollup", "Pss:") / 1024
			anon += procKB(pid, "status", "RssAnon:") / 1024
		}
		totalPss += pss
		totalAnon += anon
		b.ReportMetric(pss, name+"-pss-MB")
	}
	b.ReportMetric(totalPss, "all-pss-MB")
	b.ReportMetric(totalAnon, "all-anon-MB")
}

// procKB reads a "<key> <n> kB" line of /proc/<pid>/<file>.
func procKB(pid int, file, key string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb
		}
	}
	return 0
}

// BenchmarkExpansion measures memory_capabilities {family, include_schema}
// from call to reply. cold: the family's plugin is not running (a fresh
// host), so the reply includes starting it, and the client ignores
// tools/list_changed, so the reply also includes the host's bounded wait
// for a re-list (once per session); cold-relists: the same with a client
// that lists whenever it is told, as Claude Code does; warm: the family
// is loaded already.
func BenchmarkExpansion(b *testing.B) {
	expand := map[string]any{"name": "memory_capabilities", "arguments": map[string]any{"family": "graph", "include_schema": true}}
	cold := func(b *testing.B, call func(*rawSession) map[string]any) {
		e := newEnv(b)
		e.startRaw().request("tools/call", expand) // fill the description cache once
		var samples []time.Duration
		for b.Loop() {
			b.StopTimer()
			s := e.startRaw()
			b.StartTimer()
			start := time.Now()
			resp := call(s)
			samples = append(samples, time.Since(start))
			if _, isErr := toolResult(resp); isErr {
				b.Fatalf("expansion failed: %v", resp)
			}
			b.StopTimer()
			s.kill()
			b.StartTimer()
		}
		benchutil.ReportPercentiles(b, samples, "expand")
	}
	b.Run("cold", func(b *testing.B) {
		cold(b, func(s *rawSession) map[string]any { return s.request("tools/call", expand) })
	})
	b.Run("cold-relists", func(b *testing.B) {
		cold(b, func(s *rawSession) map[string]any {
			s.send(map[string]any{"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": expand})
			for {
				var m rawMsg
				select {
				case msg, ok := <-s.msgs:
					if !ok {
						b.Fatalf("host closed stdout before answering\nstderr:\n%s", s.stderr.String())
					}
					m = msg
				case <-time.After(testwait.Deadline):
					b.Fatalf("no answer within %v\nstderr:\n%s", testwait.Deadline, s.stderr.String())
				}
				switch {
				case m.msg["method"] == "notifications/tools/list_changed":
					s.nextID++
					s.send(map[string]any{"jsonrpc": "2.0", "id": s.nextID, "method": "tools/list"})
				case m.msg["id"] == "x":
					return m.msg
				}
			}
		})
	})
	b.Run("warm", func(b *testing.B) {
		s := newEnv(b).startRaw()
		s.request("tools/call", expand)
		var samples []time.Duration
		for b.Loop() {
			start := time.Now()
			resp := s.request("tools/call", expand)
			samples = append(samples, time.Since(start))
			if _, isErr := toolResult(resp); isErr {
				b.Fatalf("expansion failed: %v", resp)
			}
		}
		benchutil.ReportPercentiles(b, samples, "expand")
	})
}
