package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
)

// The peers of the side-by-side run, pinned. better-sqlite3 12 is what
// mcp-memory-keeper's native module needs on Node 20; it builds on install.
var peerPackages = []string{"mcp-memory-keeper@0.14.1", "@modelcontextprotocol/server-memory@2026.8.31", "better-sqlite3@12.11.1"}

// peersDirEnv names an existing install of peerPackages to use instead of
// the cache (npm install --prefix <dir> <peerPackages>).
const peersDirEnv = "AI_MEMORY_BENCH_PEERS_DIR"

// BenchmarkPeersOverMCP runs ai-memory beside two popular memory MCP
// servers from npm, mcp-memory-keeper (SQLite) and the official
// server-memory (a JSONL knowledge graph), each holding 5,000 memories and
// driven by the same Go MCP client over stdio: store a new memory, get one
// by its key, search for two words. The calls of the three are interleaved
// in rounds so that whatever else loads the machine loads them alike, and
// each peer's p50 is reported as a ratio to ai-memory's (above 1: ai-memory
// is faster). The peers are installed outside the repo's build, into the
// user cache, on first run; without npm the benchmark is skipped.
func BenchmarkPeersOverMCP(b *testing.B) {
	dir := installPeers(b)
	const seed = 5000
	servers := []*peer{startAIMemoryPeer(b), startKeeper(b, dir), startServerMemory(b, dir)}
	for _, p := range servers {
		p.seed(b, seed)
	}
	ops := []string{"store", "get", "search"}
	samples := map[string][]time.Duration{} // "<op>/<server>"
	i := 0
	for b.Loop() {
		for _, op := range ops {
			for range 4 {
				for _, p := range servers {
					for range 50 {
						i++
						tool, args := p.op(op, i)
						start := time.Now()
						text := p.c.call(b, tool, args)
						key := op + "/" + p.c.name
						if samples[key] == nil {
							b.Logf("%s answers %s with %d bytes: %.160q", p.c.name, tool, len(text), text)
						}
						if p.failed != nil && p.failed(text) {
							b.Fatalf("%s %s failed: %.300s", p.c.name, tool, text)
						}
						samples[key] = append(samples[key], time.Since(start))
					}
				}
			}
		}
	}
	for _, op := range ops {
		ours := p50(samples[op+"/ai-memory"])
		for _, p := range servers {
			s := samples[op+"/"+p.c.name]
			benchutil.ReportPercentiles(b, s, op+"-"+p.c.name)
			if p.c.name != "ai-memory" {
				b.ReportMetric(p50(s).Seconds()/ours.Seconds(), op+"-"+p.c.name+"/ai-memory-x")
			}
		}
	}
}

func p50(s []time.Duration) time.Duration {
	s = slices.Clone(s)
	slices.Sort(s)
	return s[len(s)/2]
}

// peer is one server of the side-by-side run and how it spells each call.
type peer struct {
	c    *mcpClient
	keys []string // what get names, one per seeded memory
	// store returns the arguments storing memory i; key the name get uses for it.
	store func(i int) (tool string, args map[string]any, key func(result string) string)
	get   func(key string) (string, map[string]any)
	find  func(query string) (string, map[string]any)
	// failed, when set, spots an answer that is an error though not flagged
	// isError (some servers answer errors as plain text).
	failed func(text string) bool
	// seedBatch, when set, seeds n memories from i in one call (seeding is not measured).
	seedBatch func(i, n int) (string, map[string]any)
}

func (p *peer) seed(b *testing.B, n int) {
	for i := 0; i < n; {
		if p.seedBatch != nil {
			k := min(100, n-i)
			tool, args := p.seedBatch(i, k)
			p.c.call(b, tool, args)
			for j := i; j < i+k; j++ {
				p.keys = append(p.keys, peerTitle(j))
			}
			i += k
			continue
		}
		tool, args, key := p.store(i)
		text := p.c.call(b, tool, args)
		if p.failed != nil && p.failed(text) {
			b.Fatalf("%s seed %s failed: %.300s", p.c.name, tool, text)
		}
		p.keys = append(p.keys, key(text))
		i++
	}
}

func (p *peer) op(op string, i int) (string, map[string]any) {
	switch op {
	case "store":
		tool, args, _ := p.store(1_000_000 + i)
		return tool, args
	case "get":
		return p.get(p.keys[(i*7919)%len(p.keys)])
	default:
		return p.find(benchWords[i%len(benchWords)]) // one word: mcp-memory-keeper matches a phrase
	}
}

// peerTitle is memory i's title, usable as a key by every peer
// (mcp-memory-keeper refuses spaces in keys).
func peerTitle(i int) string   { return fmt.Sprintf("note-%d-%s", i, benchWords[i%len(benchWords)]) }
func peerContent(i int) string { return benchMemory(i)["content"].(string) }

func startAIMemoryPeer(b *testing.B) *peer {
	e := newEnv(b)
	c := startMCPClient(b, "ai-memory", filepath.Join(e.binDir, "ai-memory"), e.environ(), "", "mcp")
	return &peer{c: c,
		store: func(i int) (string, map[string]any, func(string) string) {
			return "memory_store", map[string]any{"title": peerTitle(i), "content": peerContent(i)}, func(r string) string { return storedID(b, r) }
		},
		get: func(id string) (string, map[string]any) { return "memory_get", map[string]any{"id": id} },
		find: func(q string) (string, map[string]any) {
			return "memory_search", map[string]any{"query": q, "limit": 10}
		},
	}
}

// startKeeper runs mcp-memory-keeper with its database in a temp dir.
func startKeeper(b *testing.B, dir string) *peer {
	tmp := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "DATA_DIR=" + tmp, "MEMORY_KEEPER_EXPORT_DIR=" + filepath.Join(tmp, "exports")}
	c := startMCPClient(b, "keeper", "node", env, tmp, filepath.Join(dir, "node_modules", "mcp-memory-keeper", "dist", "index.js"))
	return &peer{c: c,
		store: func(i int) (string, map[string]any, func(string) string) {
			key := peerTitle(i)
			return "context_save", map[string]any{"key": key, "value": peerContent(i), "category": "note"}, func(string) string { return key }
		},
		get: func(key string) (string, map[string]any) { return "context_get", map[string]any{"key": key} },
		find: func(q string) (string, map[string]any) {
			return "context_search", map[string]any{"query": q, "limit": 10}
		},
		failed: func(text string) bool {
			return strings.HasPrefix(text, "Failed") || strings.HasPrefix(text, "No matching") || strings.HasPrefix(text, "No results")
		},
	}
}

// startServerMemory runs the official server-memory with its file in a temp dir.
func startServerMemory(b *testing.B, dir string) *peer {
	tmp := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "MEMORY_FILE_PATH=" + filepath.Join(tmp, "memory.jsonl")}
	c := startMCPClient(b, "server-memory", "node", env, tmp, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js"))
	entity := func(i int) map[string]any {
		return map[string]any{"name": peerTitle(i), "entityType": "note", "observations": []string{peerContent(i)}}
	}
	return &peer{c: c,
		store: func(i int) (string, map[string]any, func(string) string) {
			return "create_entities", map[string]any{"entities": []any{entity(i)}}, func(string) string { return peerTitle(i) }
		},
		seedBatch: func(i, n int) (string, map[string]any) {
			var es []any
			for j := i; j < i+n; j++ {
				es = append(es, entity(j))
			}
			return "create_entities", map[string]any{"entities": es}
		},
		get: func(name string) (string, map[string]any) {
			return "open_nodes", map[string]any{"names": []string{name}}
		},
		find: func(q string) (string, map[string]any) { return "search_nodes", map[string]any{"query": q} },
	}
}

// installPeers returns a directory holding peerPackages: AI_MEMORY_BENCH_PEERS_DIR,
// else an install in the user cache, made on first use with npm. It skips
// the benchmark when npm or node is missing or the install fails.
func installPeers(b *testing.B) string {
	if dir := os.Getenv(peersDirEnv); dir != "" {
		return dir
	}
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s not found: the side-by-side run against mcp-memory-keeper and server-memory needs Node 20+ and npm", tool)
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		b.Skipf("no user cache dir for the peers' install: %v", err)
	}
	dir := filepath.Join(cache, "ai-memory-bench", "peers-"+strings.NewReplacer("@", "", "/", "-").Replace(strings.Join(peerPackages, "_")))
	done := filepath.Join(dir, "installed")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	b.Logf("installing %s into %s (once; mcp-memory-keeper's native module builds, which takes a minute or two)", strings.Join(peerPackages, " "), dir)
	cmd := exec.Command("npm", append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, peerPackages...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("npm install of the peers failed (%v), so the side-by-side run is skipped:\n%s", err, lastLines(string(out), 15))
	}
	native := filepath.Join(dir, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node")
	if _, err := os.Stat(native); err != nil {
		b.Skipf("better-sqlite3's native module did not build (%s missing), so the side-by-side run is skipped", native)
	}
	if err := os.WriteFile(done, []byte(fmt.Sprintln(peerPackages)), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
