package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkExportImport100k: `ai-memory export` of a data dir holding
// 100k memories only, and one holding 100k memories and every other kind
// of record (10k superseded versions, 5k of them archived with their
// archived links, 20k links, a standard with a policy, 200 pending
// actions, 50 registered agents),
// `ai-memory import` of that file into an empty data dir, and the second
// import (every record unchanged). Each is the CLI process's whole run,
// engine start included; records/s counts every line.
func BenchmarkExportImport100k(b *testing.B) {
	seeds := map[string]string{"memories-only": seedDataDir(b, 100_000), "every-kind": seedEveryKind(b, 100_000)}
	for _, kind := range []string{"memories-only", "every-kind"} {
		b.Run(kind, func(b *testing.B) { benchTransfer(b, seeds[kind]) })
	}
}

// benchTransfer times export, import into an empty data dir and the
// second import of the data dir in seeded.
func benchTransfer(b *testing.B, seeded string) {
	e := newEnv(b)
	copyFile(b, seeded, filepath.Join(e.dataDir, "memory.db"))
	cli := func(dataDir string, args ...string) (time.Duration, string) {
		b.Helper()
		cmd := exec.Command(filepath.Join(bins, "ai-memory"), args...)
		cmd.Env = append(e.environ(), "AI_MEMORY_DATA_DIR="+dataDir, "AI_MEMORY_CLI_IDENTITY=cli:bench")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
		return time.Since(start), string(out)
	}
	file := filepath.Join(filepath.Dir(e.dataDir), "export.jsonl")
	for i := 0; i < b.N; i++ {
		exp, out := cli(e.dataDir, "export", file)
		b.Logf("%s", strings.TrimSpace(out))
		raw, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		lines := strings.Count(string(raw), "\n")
		fresh := filepath.Join(filepath.Dir(e.dataDir), fmt.Sprintf("fresh%d", i))
		imp, out := cli(fresh, "import", file)
		b.Logf("%s", strings.TrimSpace(out))
		again, out := cli(fresh, "import", file)
		if !strings.Contains(out, ": 0 created,") {
			b.Fatalf("second import changed something: %s", out)
		}
		b.ReportMetric(exp.Seconds(), "export-s")
		b.ReportMetric(imp.Seconds(), "import-s")
		b.ReportMetric(again.Seconds(), "reimport-s")
		b.ReportMetric(float64(lines)/exp.Seconds(), "export-records/s")
		b.ReportMetric(float64(lines)/imp.Seconds(), "import-records/s")
		b.ReportMetric(float64(len(raw))/1e6, "file-MB")
	}
}

// seedEveryKind writes n memories and every other kind of record into a
// bbolt file through the storage layer.
func seedEveryKind(b *testing.B, n int) string {
	b.Helper()
	path := seedDataDir(b, n)
	ctx := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:seed", Session: "s1", Family: "core", Scope: caller.AllNamespaces})
	graph := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:seed", Family: "graph", Scope: caller.AllNamespaces})
	st, err := boltstore.Open(ctx, path, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var ids []string
	if err := records.New(st).Export(ctx, func(r *aimemoryv1.ExportRecord) error {
		if m := r.GetMemory(); m != nil {
			ids = append(ids, m.Id)
		}
		return nil
	}); err != nil || len(ids) != n {
		b.Fatalf("seeded %d memories: %v", len(ids), err)
	}
	inParallel(b, 10_000, func(i int) error { // superseded versions
		_, err := records.New(st).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: ids[i], Content: ptr(fmt.Sprintf("edited note %d", i))})
		return err
	})
	inParallel(b, 20_000, func(i int) error { // live links, and archived ones once an end is archived
		_, err := records.New(st).PutLink(graph, &aimemoryv1.PutLinkRequest{SourceId: ids[i], TargetId: ids[(i+1)%n], Relation: "related_to"})
		return err
	})
	inParallel(b, 5_000, func(i int) error { // archived, each with its two links
		_, err := records.New(st).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{ids[2*i]}, Archive: true})
		return err
	})
	rules, err := records.New(st).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "team rules", Content: "writes need approval", Namespace: "team", Confidence: 1}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := records.New(st).SetStandard(ctx, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: rules.Memory.Id, GovernanceJson: `{"write":"approve"}`}); err != nil {
		b.Fatal(err)
	}
	bob := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:bob", Session: "s2", Family: "core", Scope: caller.AllNamespaces})
	for i := range 200 {
		_, err := records.New(st).StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: fmt.Sprintf("bob %d", i), Content: "queued", Namespace: "team", Confidence: 1}})
		var pe *storage.PendingError
		if !errors.As(err, &pe) {
			b.Fatalf("bob's store %d: %v, want it queued", i, err)
		}
	}
	for i := range 50 {
		agent := caller.NewContext(context.Background(), caller.Caller{Principal: fmt.Sprintf("ai:agent%d", i), Family: "core", Scope: caller.AllNamespaces})
		if _, err := records.New(st).RegisterAgent(agent, &aimemoryv1.RegisterAgentRequest{AgentType: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

func ptr[T any](v T) *T { return &v }

// inParallel runs fn(0..n-1) on 32 goroutines (group commit batches them).
func inParallel(b *testing.B, n int, fn func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if err := fn(int(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}
