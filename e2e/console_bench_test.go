package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkConsolePages100k: each page of the web console (`ai-memory ui`,
// signed in through its login link) on a data dir holding 100k memories
// with every other kind of record (versions, links, archived memories,
// pending approvals: seedEveryKind). One sample is one GET over loopback,
// from request to the last byte of the page: the server's whole work (its
// tool calls, the engine's reads, the template), without the browser's
// drawing, which is one stylesheet and one small script, cached.
func BenchmarkConsolePages100k(b *testing.B) {
	seeded := seedEveryKind(b, 100_000)
	e := newEnv(b)
	copyFile(b, seeded, filepath.Join(e.dataDir, "memory.db"))
	linked := linkedMemory(b, seeded)
	u := e.ui("cli:bench")
	c := browser(b)
	if code, _, _ := get(b, c, u.link); code != http.StatusOK {
		b.Fatalf("login link: %d", code)
	}
	pages := []struct{ name, path string }{
		{"memories", "/ui/memories"},
		{"search-keyword", "/ui/memories?q=replication+deploy"},
		{"search-meaning", "/ui/memories?q=replication+deploy&mode=meaning"},
		{"filter-namespace", "/ui/memories?ns=proj/p7"},
		{"memory", "/ui/memory/" + linked},
		{"edit", "/ui/memory/" + linked + "/edit"},
		{"graph", "/ui/graph?q=" + linked},
		{"review", "/ui/review"},
		{"activity", "/ui/activity"},
		{"cost", "/ui/cost"},
		{"health", "/ui/health"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			var samples []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				code, body, _ := get(b, c, u.base+p.path)
				samples = append(samples, time.Since(start))
				if code != http.StatusOK || strings.Contains(body, `class="notice error"`) {
					b.Fatalf("%s: %d\n%.2000s", p.path, code, body)
				}
			}
			benchutil.ReportPercentiles(b, samples, "page")
		})
	}
}

// linkedMemory is a live memory with live links both ways (seedEveryKind
// links memory i to i+1 along a chain), the first such in id order.
func linkedMemory(b *testing.B, path string) string {
	b.Helper()
	ctx := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:seed", Family: "core"})
	st, err := boltstore.Open(ctx, path, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	from, to := map[string]bool{}, map[string]bool{}
	if err := records.New(st).Export(ctx, func(r *aimemoryv1.ExportRecord) error {
		if l := r.GetLink(); l != nil {
			from[l.SourceId], to[l.TargetId] = true, true
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	best := ""
	for id := range from {
		if to[id] && (best == "" || id < best) {
			best = id
		}
	}
	if best == "" {
		b.Fatalf("no memory linked both ways among %d links", len(from))
	}
	return best
}
