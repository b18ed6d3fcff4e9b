package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
)

// BenchmarkSessionStartOverMCP: memory_session_start for one project of
// 50 over MCP (host, core plugin, engine), at 10k and 100k memories, with
// the default budget of 2,000 cl100k tokens.
func BenchmarkSessionStartOverMCP(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		seeded := seedDataDir(b, n)
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			e := newEnv(b)
			copyFile(b, seeded, filepath.Join(e.dataDir, "memory.db"))
			h := e.startHost([]string{"--profile", "meta"})
			args := map[string]any{"namespace": "proj/p7"}
			h.ok("memory_session_start", args) // engine index loaded, tokenizer built
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if text, isErr := h.call("memory_session_start", args); isErr || !strings.HasPrefix(text, "count:10|") {
					b.Fatalf("session_start = %s", text)
				}
				lat = append(lat, time.Since(start))
			}
			benchutil.ReportPercentiles(b, lat, "session_start")
		})
	}
}
