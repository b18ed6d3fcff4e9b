package boltstore

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// benchForget times dry-run forgets of 1–3 corpus words over a loaded
// store: the matching pass a real forget makes in its transaction.
func benchForget(b *testing.B, n int, namespace string) {
	s := benchStore(b, n)
	qs := newCorpus(7).queries(1000)
	ctx := storagetest.Operator()
	var lat latencies
	matched, i := 0, 0
	for b.Loop() {
		lat.time(func() {
			resp, err := records.New(s).Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: qs[i%len(qs)], Namespace: namespace, DryRun: true})
			if err != nil {
				b.Fatal(err)
			}
			matched += int(resp.Matched)
		})
		i++
	}
	lat.report(b)
	b.ReportMetric(float64(matched)/float64(i), "matched/op")
}

func BenchmarkForgetDryRun10k(b *testing.B)           { benchForget(b, 10_000, "") }
func BenchmarkForgetDryRunNamespace10k(b *testing.B)  { benchForget(b, 10_000, "org/team1/agent2") }
func BenchmarkForgetDryRun100k(b *testing.B)          { benchForget(b, 100_000, "") }
func BenchmarkForgetDryRunNamespace100k(b *testing.B) { benchForget(b, 100_000, "org/team1/agent2") }
