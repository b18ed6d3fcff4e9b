package boltstore

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/sdk/procstat"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// corpus makes memories whose words follow a Zipf law over a fixed
// vocabulary, like prose: a few words are everywhere, most are rare.
type corpus struct {
	vocab []string
	zipf  *rand.Zipf
	r     *rand.Rand
}

const vocabSize = 3000

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	syll := strings.Fields("ka ri to ma ne so lu vi de pa gor han tel mis ron bar sen lo qui zu fa pe dri sto")
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < vocabSize {
		var w strings.Builder
		for range 1 + r.IntN(3) {
			w.WriteString(syll[r.IntN(len(syll))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			vocab = append(vocab, w.String())
		}
	}
	return &corpus{vocab: vocab, zipf: rand.NewZipf(r, 1.1, 2, vocabSize-1), r: r}
}

func (c *corpus) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = c.vocab[c.zipf.Uint64()]
	}
	return strings.Join(ws, " ")
}

func (c *corpus) memory(i int) *aimemoryv1.Memory {
	tiers := []string{"short", "mid", "mid", "mid", "long", "long"}
	m := &aimemoryv1.Memory{
		Title:      fmt.Sprintf("%s %d", c.words(3+c.r.IntN(5)), i),
		Content:    c.words(20 + c.r.IntN(61)),
		Namespace:  fmt.Sprintf("org/team%d/agent%d", c.r.IntN(4), c.r.IntN(5)),
		Tier:       tiers[c.r.IntN(len(tiers))],
		Priority:   int32(1 + c.r.IntN(10)),
		Confidence: c.r.Float64(),
	}
	for range c.r.IntN(4) {
		m.Tags = append(m.Tags, fmt.Sprintf("tag%d", c.r.IntN(30)))
	}
	return m
}

// queries draws n queries of 1–3 words from the same distribution.
func (c *corpus) queries(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = c.words(1 + c.r.IntN(3))
	}
	return out
}

// bulkLoad stores n generated memories, thousands per transaction: the
// benchmark's setup, not what it measures.
func bulkLoad(tb testing.TB, s *Store, c *corpus, n int) {
	tb.Helper()
	const batch = 5000
	for start := 0; start < n; start += batch {
		err := s.write(storagetest.Operator(), func(w *writeTx) error {
			for i := start; i < min(n, start+batch); i++ {
				m, err := rules.New(c.memory(i))
				if err != nil {
					return err
				}
				if err := w.create(m, &aimemoryv1.StoreMemoryResponse{}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// benchStores caches one loaded store per size for the whole run.
var benchStores = struct {
	sync.Mutex
	dir    string
	stores map[int]*Store
}{stores: map[int]*Store{}}

func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	benchStores.Lock()
	defer benchStores.Unlock()
	if s := benchStores.stores[n]; s != nil {
		return s
	}
	if benchStores.dir == "" {
		dir, err := os.MkdirTemp("", "aim-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchStores.dir = dir
	}
	start := time.Now()
	s, err := Open(storagetest.Operator(), filepath.Join(benchStores.dir, fmt.Sprintf("%d.db", n)), Options{Logger: benchLog})
	if err != nil {
		b.Fatal(err)
	}
	bulkLoad(b, s, newCorpus(uint64(n)), n)
	b.Logf("built %d memories in %v", n, time.Since(start))
	benchStores.stores[n] = s
	return s
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range benchStores.stores {
		s.Close()
	}
	if benchStores.dir != "" {
		os.RemoveAll(benchStores.dir)
	}
	os.Exit(code)
}

// latencies records each operation's duration and reports p50 and p95.
type latencies []time.Duration

func (l *latencies) time(f func()) {
	start := time.Now()
	f()
	*l = append(*l, time.Since(start))
}

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)*50/100].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(l[len(l)*95/100].Nanoseconds()), "p95-ns")
}

// benchSearch times req's searches, each with hybrid's query vector
// (hybrid nil: keyword only).
func benchSearch(b *testing.B, n int, req func(q string) *aimemoryv1.SearchMemoriesRequest, hybrid func() *storage.Hybrid) {
	s := benchStore(b, n)
	qs := newCorpus(99).queries(1000)
	ctx := storagetest.Operator()
	var lat latencies
	results := 0
	i := 0
	cpu0 := procstat.CPU(os.Getpid()) // the process's CPU time: what load on the machine disturbs least
	for b.Loop() {
		lat.time(func() {
			var hy *storage.Hybrid
			if hybrid != nil {
				hy = hybrid()
			}
			resp, err := s.SearchMemories(ctx, req(qs[i%len(qs)]), hy)
			if err != nil {
				b.Fatal(err)
			}
			results += len(resp.Results)
		})
		i++
	}
	b.ReportMetric(float64((procstat.CPU(os.Getpid())-cpu0).Nanoseconds())/float64(max(1, i)), "cpu-ns/op")
	lat.report(b)
	b.ReportMetric(float64(results)/float64(i), "results/op")
}

func searchReq(q string) *aimemoryv1.SearchMemoriesRequest {
	return &aimemoryv1.SearchMemoriesRequest{Query: q, Limit: 20}
}

func recallReq(q string) *aimemoryv1.SearchMemoriesRequest {
	return &aimemoryv1.SearchMemoriesRequest{
		Query: q, Limit: 10,
		Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL,
		Filter: &aimemoryv1.Filter{Namespace: "org/team1/agent2", NamespaceAncestors: true},
	}
}

func BenchmarkSearch10k(b *testing.B)  { benchSearch(b, 10_000, searchReq, nil) }
func BenchmarkSearch100k(b *testing.B) { benchSearch(b, 100_000, searchReq, nil) }
func BenchmarkRecall10k(b *testing.B)  { benchSearch(b, 10_000, recallReq, nil) }
func BenchmarkRecall100k(b *testing.B) { benchSearch(b, 100_000, recallReq, nil) }

// Recall with no filter: the widest candidate set.
func BenchmarkRecallUnfiltered100k(b *testing.B) {
	benchSearch(b, 100_000, func(q string) *aimemoryv1.SearchMemoriesRequest {
		return &aimemoryv1.SearchMemoriesRequest{Query: q, Limit: 10,
			Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL}
	}, nil)
}

func BenchmarkList100k(b *testing.B) {
	s := benchStore(b, 100_000)
	ctx := storagetest.Operator()
	var lat latencies
	for b.Loop() {
		lat.time(func() {
			if _, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 20, Filter: &aimemoryv1.Filter{Namespace: "org/team2/agent1"}}); err != nil {
				b.Fatal(err)
			}
		})
	}
	lat.report(b)
}

// BenchmarkStore is one memory_store: a fsynced transaction into a store
// already holding 10k memories (100k for BenchmarkStore100k).
func BenchmarkStore(b *testing.B)     { benchStoreOne(b, 10_000) }
func BenchmarkStore100k(b *testing.B) { benchStoreOne(b, 100_000) }

func benchStoreOne(b *testing.B, n int) {
	s := benchStore(b, n)
	rs := records.New(s)
	c := newCorpus(7)
	ctx := storagetest.Operator()
	var lat latencies
	i := 0
	w := startWriteStats(s)
	for b.Loop() {
		m := c.memory(1_000_000 + i)
		i++
		lat.time(func() {
			if _, err := rs.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m}); err != nil {
				b.Fatal(err)
			}
		})
	}
	lat.report(b)
	w.report(b)
}

// writeStats counts what a benchmark's commits cost: bbolt's page writes
// (TxStats.Write: dirty pages, the meta page and the freelist) per commit,
// and the process's CPU time per write.
type writeStats struct {
	s       *Store
	pages   int64
	commits int64
	cpu     time.Duration
}

func startWriteStats(s *Store) writeStats {
	return writeStats{s: s, pages: pagesWritten(s), commits: s.commitCount(), cpu: processCPU()}
}

func (w writeStats) report(b *testing.B) {
	commits := max(1, w.s.commitCount()-w.commits)
	b.ReportMetric(float64(pagesWritten(w.s)-w.pages)/float64(commits), "pages/commit")
	b.ReportMetric(float64(b.N)/float64(commits), "writes/commit")
	b.ReportMetric(float64((processCPU()-w.cpu).Microseconds())/float64(b.N), "cpu-us/op")
}

func pagesWritten(s *Store) int64 {
	st := s.db.Stats()
	return st.TxStats.GetWrite()
}

func (s *Store) commitCount() int64 {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.commits
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStoreParallel is two writers at once, like two hosts.
func BenchmarkStoreParallel(b *testing.B) {
	s := records.New(benchStore(b, 10_000))
	ctx := storagetest.Operator()
	var mu sync.Mutex
	seed := uint64(100)
	b.SetParallelism(1) // GOMAXPROCS writers: two on the reference machine
	b.RunParallel(func(pb *testing.PB) {
		mu.Lock()
		seed++
		c := newCorpus(seed)
		mu.Unlock()
		i := 0
		for pb.Next() {
			i++
			if _, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: c.memory(2_000_000 + i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStoreInFlight is store throughput with 1, 8 and 32 writes in
// flight (separate goroutines, like calls from several plugins), into a
// store holding 10k memories. Every store is fsynced before it returns.
func BenchmarkStoreInFlight(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("inflight=%d", n), func(b *testing.B) { benchStoreInFlight(b, n) })
	}
}

func benchStoreInFlight(b *testing.B, inFlight int) {
	s := benchStore(b, 10_000)
	ctx := storagetest.Operator()
	corpora := make([]*corpus, inFlight)
	for g := range corpora {
		corpora[g] = newCorpus(uint64(1000 + g))
	}
	w := startWriteStats(s)
	rs := records.New(s)
	benchutil.InFlight(b, inFlight, func(g int, i int64) error {
		_, err := rs.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: corpora[g].memory(int(3_000_000 + i))})
		return err
	})
	w.report(b)
}

// BenchmarkOpen100k measures an engine start: opening the store (loading
// the in-memory index from its snapshot) and answering a first search, and
// the heap the index keeps (the cached store is closed and dropped first,
// so the heap delta is one index). OpenRebuild is the same without a
// snapshot: the index rebuilt from the term lists, as after an upgrade.
func BenchmarkOpen10k(b *testing.B)         { benchOpen(b, 10_000, false) }
func BenchmarkOpen100k(b *testing.B)        { benchOpen(b, 100_000, false) }
func BenchmarkOpenRebuild100k(b *testing.B) { benchOpen(b, 100_000, true) }

func benchOpen(b *testing.B, n int, rebuild bool) {
	path := benchStore(b, n).Path()
	benchStores.Lock()
	defer benchStores.Unlock()
	benchStores.stores[n].Close()
	delete(benchStores.stores, n)
	ctx := storagetest.Operator()
	q := newCorpus(99).queries(1)[0]
	var s *Store
	var heap uint64
	var first time.Duration // from Open to the first search's answer
	for b.Loop() {
		if s != nil {
			s.Close()
			s = nil
		}
		if rebuild {
			b.StopTimer()
			db, err := bolt.Open(path, 0o600, nil)
			if err == nil {
				err = db.Update(dropSnapshot)
				db.Close()
			}
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		start := time.Now()
		if s, err = Open(ctx, path, Options{Logger: benchLog}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.SearchMemories(ctx, searchReq(q), nil); err != nil {
			b.Fatal(err)
		}
		first += time.Since(start)
		if rebuild {
			s.bg.Wait() // the snapshot it writes is not part of the index
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
	}
	benchStores.stores[n] = s
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-search-ms")
	b.ReportMetric(float64(heap)/(1<<20), "index-MiB")
	b.ReportMetric(float64(heap)/float64(n), "bytes/memory")
}

// BenchmarkShortIDs100k is the engine read a compact result adds: the
// short ids of ten memories among 100k.
func BenchmarkShortIDs100k(b *testing.B) {
	s := benchStore(b, 100_000)
	rs := records.New(s)
	ctx := storagetest.Operator()
	l, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 200})
	if err != nil {
		b.Fatal(err)
	}
	var lat latencies
	i := 0
	for b.Loop() {
		ids := make([]string, 10)
		for j := range ids {
			ids[j] = l.Memories[(i*10+j)%len(l.Memories)].Id
		}
		i++
		lat.time(func() {
			if _, err := rs.ShortIDs(ctx, &aimemoryv1.ShortIdsRequest{Ids: ids, MinLength: 8}); err != nil {
				b.Fatal(err)
			}
		})
	}
	lat.report(b)
}

var benchLog = func() *slog.Logger {
	if os.Getenv("AI_MEMORY_BENCH_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}()

// BenchmarkOpenReplay100k is an engine start after a kill -9 with the
// longest log a snapshot leaves: the index from the snapshot, then that
// many memories (here: new contents) replayed from their records.
func BenchmarkOpenReplay100k(b *testing.B) {
	s := benchStore(b, 100_000)
	ctx := storagetest.Operator()
	ids := s.idx.IDs()
	slices.Sort(ids)
	c := newCorpus(5)
	logged := min(snapshotLogMax(s.idx.Count())-1, len(ids))
	if err := s.write(ctx, func(w *writeTx) error {
		for _, id := range ids[:logged] {
			m, err := w.get(id)
			if err != nil {
				return err
			}
			n := proto.Clone(m).(*aimemoryv1.Memory)
			n.Content = c.words(20 + c.r.IntN(61))
			if err := w.put(m, n, "updated"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "killed.db")
	if err := s.db.View(func(tx *bolt.Tx) error { return tx.CopyFile(path, 0o600) }); err != nil {
		b.Fatal(err)
	}
	q := newCorpus(99).queries(1)[0]
	var first time.Duration
	for b.Loop() {
		start := time.Now()
		k, err := Open(ctx, path, Options{Logger: benchLog})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := k.SearchMemories(ctx, searchReq(q), nil); err != nil {
			b.Fatal(err)
		}
		first += time.Since(start)
		if k.rebuilt {
			b.Fatal("no snapshot")
		}
		k.db.Close() // as killed: no new snapshot, so the next open replays again
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "first-search-ms")
	b.ReportMetric(float64(logged), "replayed")
}
