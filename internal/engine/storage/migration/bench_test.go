package migration

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var benchWords = strings.Fields(`lock zebra deploy database index rust go postgres cache queue retry timeout token graph merge
	schema migration replica shard latency budget review release rollback feature flag metric alert incident owner`)

// benchSource is a bbolt store of n memories of about 40 words each, in
// four namespaces, written by import (setup, not measured).
func benchSource(b *testing.B, n int) *boltstore.Store {
	src, err := boltstore.Open(storagetest.Operator(), filepath.Join(b.TempDir(), "memory.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { src.Close() })
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var batch []*aimemoryv1.ExportRecord
	for i := range n {
		words := make([]string, 40)
		for j := range words {
			words[j] = benchWords[r.IntN(len(benchWords))]
		}
		m := &aimemoryv1.Memory{Id: uuid.NewString(), Title: fmt.Sprintf("note %d %s", i, words[0]), Content: strings.Join(words, " "),
			Namespace: []string{"global", "infra", "team/a", "team/b"}[i%4], Tier: "long", Priority: 5, Confidence: 1,
			Tags: []string{words[1]}, CreatedAt: at + int64(i), UpdatedAt: at + int64(i), CreatedBy: "ai:bench", UpdatedBy: "ai:bench"}
		batch = append(batch, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: m}})
		if len(batch) == 1000 || i == n-1 {
			res, err := records.New(src).Import(storagetest.Operator(), batch)
			if err != nil {
				b.Fatal(err)
			}
			for _, x := range res {
				if x.GetOutcome() != "created" {
					b.Fatalf("setup import: %v", x)
				}
			}
			batch = batch[:0]
		}
	}
	return src
}

// BenchmarkMigrate100k: ai-memory migrate's copy of 100k memories from
// bbolt into an empty PostgreSQL database, verification included (one
// op = one whole migration; run with -benchtime=1x).
func BenchmarkMigrate100k(b *testing.B) { benchMigrate(b, 100_000) }
func BenchmarkMigrate10k(b *testing.B)  { benchMigrate(b, 10_000) }

func benchMigrate(b *testing.B, n int) {
	src := benchSource(b, n)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dst, err := pgstore.Open(storagetest.Operator(), pgtest.DSN(b), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := Copy(storagetest.Operator(), records.New(src), records.New(dst), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if !rep.Verified() {
			b.Fatalf("not verified: %+v", rep.Kinds)
		}
		dst.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "memories/s")
}
