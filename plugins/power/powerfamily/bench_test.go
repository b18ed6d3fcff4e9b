package powerfamily

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/sdk/sdktest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkCheckDuplicate runs memory_check_duplicate as the host calls it
// (the Family server) over a real engine on a unix socket, at 10k and
// 100k memories of Zipf-distributed words (as prose: a few words
// everywhere, most rare), seeded through the Engine API by 8 writers.
// Half the candidates are copies of a stored memory with a word changed,
// half are fresh text.
func BenchmarkCheckDuplicate(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) { benchDuplicate(b, n) })
	}
}

type prose struct {
	vocab []string
	zipf  *rand.Zipf
}

func newProse(r *rand.Rand) *prose {
	syll := strings.Fields("ka ri to ma ne so lu vi de pa gor han tel mis ron bar sen lo qui zu fa pe dri sto")
	seen := map[string]bool{}
	p := &prose{zipf: rand.NewZipf(r, 1.1, 2, 2999)}
	for len(p.vocab) < 3000 {
		var w strings.Builder
		for range 1 + r.IntN(3) {
			w.WriteString(syll[r.IntN(len(syll))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			p.vocab = append(p.vocab, w.String())
		}
	}
	return p
}

func (p *prose) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = p.vocab[p.zipf.Uint64()]
	}
	return out
}

func benchDuplicate(b *testing.B, n int) {
	eng := sdktest.StartEngine(b)
	srv, err := sdktest.Server("power", "bench", Families(eng))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	p := newProse(r)
	type doc struct{ title, content []string }
	docs := make([]doc, n)
	for i := range docs {
		docs[i] = doc{p.words(3 + r.IntN(5)), p.words(20 + r.IntN(61))}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				_, err := eng.StoreMemory(context.Background(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: strings.Join(docs[i].title, " ") + fmt.Sprint(" ", i), Content: strings.Join(docs[i].content, " "), Confidence: 1,
				}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d memories in %v", n, time.Since(start))

	ctx := context.Background()
	var lat []time.Duration
	dups := 0
	i := 0
	for b.Loop() {
		var title, content string
		if i%2 == 0 {
			d := docs[r.IntN(n)]
			c := slices.Clone(d.content)
			c[r.IntN(len(c))] = "changed"
			title, content = strings.Join(d.title, " "), strings.Join(c, " ")
		} else {
			title, content = strings.Join(p.words(5), " "), strings.Join(p.words(50), " ")
		}
		i++
		req := &aimemoryv1.CallRequest{Tool: "memory_check_duplicate", ArgumentsJson: []byte(jsonArgs("title", title, "content", content)),
			Context: &aimemoryv1.CallContext{AgentId: "ai:bench"}}
		t0 := time.Now()
		resp, err := srv.Call(ctx, req)
		lat = append(lat, time.Since(t0))
		if err != nil || resp.GetIsError() {
			b.Fatalf("%v %s", err, resp.GetText())
		}
		if strings.Contains(string(resp.GetText()), `"is_duplicate":true`) {
			dups++
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(dups)/float64(len(lat)), "dup-rate")
}

// BenchmarkConsolidate runs memory_consolidate as the host calls it over
// a real engine holding 10k memories: each call merges 5 fresh memories
// of 3 sentences, with the caller's summary and with an extractive one
// (no model). Only the consolidate call is timed.
func BenchmarkConsolidate(b *testing.B) {
	eng := sdktest.StartEngine(b)
	srv, err := sdktest.Server("power", "bench", Families(eng))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	p := newProse(r)
	ctx := context.Background()
	n := 0
	store := func() string {
		n++
		var s []string
		for range 3 {
			s = append(s, strings.Join(p.words(8+r.IntN(8)), " ")+".")
		}
		resp, err := eng.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
			Title: fmt.Sprint("bench ", n), Content: strings.Join(s, " "), Confidence: 1,
		}})
		if err != nil {
			b.Fatal(err)
		}
		return resp.GetMemory().GetId()
	}
	for range 10_000 {
		store()
	}
	for _, mode := range []string{"summary", "extractive"} {
		b.Run(mode, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				ids := []string{store(), store(), store(), store(), store()}
				args := []any{"ids", ids, "title", fmt.Sprint("merged ", n)}
				if mode == "summary" {
					args = append(args, "summary", "the five in one")
				}
				req := &aimemoryv1.CallRequest{Tool: "memory_consolidate", ArgumentsJson: []byte(jsonArgs(args...)), Context: &aimemoryv1.CallContext{AgentId: "ai:bench"}}
				t0 := time.Now()
				resp, err := srv.Call(ctx, req)
				lat = append(lat, time.Since(t0))
				if err != nil || resp.GetIsError() {
					b.Fatalf("%v %s", err, resp.GetText())
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*50/100].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
