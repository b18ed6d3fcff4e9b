package pgstore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Store and search latency on both backends over one corpus (size
// benchCorpus), for the closing numbers of issue 16. The throwaway
// cluster runs with fsync off unless AI_MEMORY_TEST_PG_FSYNC is set; bbolt
// always fsyncs.
//
//	go test ./internal/engine/storage/pgstore -run '^$' -bench . -benchtime 2000x
const benchCorpus = 10_000

var benchWords = strings.Fields(`lock zebra deploy database index rust go postgres cache queue retry timeout token graph
merge branch commit review test build release docker kubernetes config secret schema migration latency throughput
memory agent recall search rank vector embed model prompt context window budget error panic crash restart`)

func benchText(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = benchWords[r.IntN(len(benchWords))]
	}
	return strings.Join(ws, " ")
}

func benchBackends(b *testing.B) map[string]storage.Backend {
	bolt, err := boltstore.Open(storagetest.Operator(), filepath.Join(b.TempDir(), "memory.db"), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bolt.Close() })
	return map[string]storage.Backend{"bbolt": records.New(bolt), "postgres": records.New(open(b, storage.Options{}))}
}

func fill(b *testing.B, s storagetest.Storer, n int) { fillT(b, s, n) }

func fillT(b testing.TB, s storagetest.Storer, n int) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		_, err := s.StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
			Title: fmt.Sprintf("%s %d", benchText(r, 3), i), Content: benchText(r, 40), Confidence: 1, Tier: "long",
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStore(b *testing.B) {
	for _, name := range []string{"bbolt", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := benchBackends(b)[name]
			r := rand.New(rand.NewPCG(3, 4))
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				_, err := s.StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("bench %d", i), Content: benchText(r, 40), Confidence: 1,
				}})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGet reads one memory by id, the hot read path the seam must
// not slow (issue 25: record access by kind and key).
func BenchmarkGet(b *testing.B) {
	for _, name := range []string{"bbolt", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := benchBackends(b)[name]
			r := rand.New(rand.NewPCG(3, 4))
			ids := make([]string, 200)
			for i := range ids {
				resp, err := s.StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("bench %d", i), Content: benchText(r, 40), Confidence: 1,
				}})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = resp.GetMemory().GetId()
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				resp, err := s.GetMemories(storagetest.Operator(), &aimemoryv1.GetMemoriesRequest{Ids: []string{ids[i%len(ids)]}})
				if err != nil || len(resp.GetMemories()) != 1 {
					b.Fatal(err, len(resp.GetMemories()))
				}
			}
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	for _, name := range []string{"bbolt", "postgres"} {
		b.Run(fmt.Sprintf("%s/%d", name, benchCorpus), func(b *testing.B) {
			s := benchBackends(b)[name]
			fill(b, s, benchCorpus)
			r := rand.New(rand.NewPCG(5, 6))
			b.ResetTimer()
			for b.Loop() {
				_, err := s.SearchMemories(storagetest.Operator(), &aimemoryv1.SearchMemoriesRequest{
					Query: benchText(r, 2), Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Limit: 10,
				}, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkForgetDryRun: forget's matching over the corpus, by a narrow
// pattern (a word and a title's number: about one match) and a broad one
// (one word: about half the corpus). bbolt takes candidates from its
// index; postgres asks the database (terms @> pattern, GIN).
func BenchmarkForgetDryRun(b *testing.B) {
	for _, name := range []string{"bbolt", "postgres"} {
		s := benchBackends(b)[name]
		fill(b, s, benchCorpus)
		for _, width := range []string{"narrow", "broad"} {
			b.Run(fmt.Sprintf("%s/%d/%s", name, benchCorpus, width), func(b *testing.B) {
				r := rand.New(rand.NewPCG(7, 8))
				for b.Loop() {
					pattern := benchWords[r.IntN(len(benchWords))]
					if width == "narrow" {
						pattern += fmt.Sprintf(" %d", r.IntN(benchCorpus))
					}
					_, err := s.Forget(storagetest.Operator(), &aimemoryv1.ForgetRequest{Pattern: pattern, DryRun: true})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkStoreWithSubscriptions is BenchmarkStore on PostgreSQL with
// subs subscriptions matching every write: each store also queues that
// many deliveries and sends a NOTIFY at its commit.
func BenchmarkStoreWithSubscriptions(b *testing.B) {
	for _, subs := range []int{1, 3} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) {
			s := open(b, storage.Options{})
			for i := range subs {
				if err := s.PutSubscription(storagetest.Operator(), &storage.Subscription{ID: fmt.Sprintf("s%d", i), URL: "https://a.example/x",
					Events: []string{"*"}, CreatedBy: "ai:bench", Scope: "*"}); err != nil {
					b.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(3, 4))
			for i := 0; b.Loop(); i++ {
				_, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("bench %d", i), Content: benchText(r, 40), Confidence: 1,
				}})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
