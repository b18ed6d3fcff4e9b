package vecset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/index"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func randomUnit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return Normalize(v)
}

// TestQuantizedCosineIsClose: the 8-bit stored vector against the 16-bit
// query gives the float cosine within 0.01, and the codec round-trips.
func TestQuantizedCosineIsClose(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		a, b := randomUnit(r, 384), randomUnit(r, 384)
		// b leans towards a, as neighbours do.
		for i := range b {
			b[i] = 0.6*a[i] + 0.4*b[i]
		}
		b = Normalize(b)
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		scale, q := Quantize(a)
		e := &Entry{Model: "m", Hash: 7, Scale: scale, Q: q}
		if got := quantizeQuery(b).cos(e); math.Abs(got-want) > 0.01 {
			t.Fatalf("cosine %.4f, float %.4f", got, want)
		}
		back, err := Decode(e.Encode())
		if err != nil || back.Model != "m" || back.Hash != 7 || back.Scale != e.Scale || string(Raw8(back.Q)) != string(Raw8(q)) {
			t.Fatalf("round trip: %+v %v", back, err)
		}
	}
	if _, err := Decode((&Entry{Model: "m", Q: []int8{1, 2}}).Encode()[:5]); err == nil {
		t.Fatal("a cut vector decoded")
	}
	if scale, q := Quantize(make([]float32, 4)); scale != 0 || len(q) != 4 {
		t.Fatalf("zero vector: %v %v", scale, q)
	}
}

// TestBlend: a keyword match holding the whole query keeps its place
// against any vector; when keyword matching found only a weak match, a
// close vector outranks it, unless the query is in words the model does
// not know; a memory in both lists counts both.
func TestBlend(t *testing.T) {
	s := New()
	put := func(id string, v []float32) {
		scale, q := Quantize(v)
		s.Put(id, &Entry{Model: "m", Scale: scale, Q: q})
	}
	q := []float32{1, 0, 0, 0}
	put("close", []float32{0.9, 0.1, 0, 0})
	put("far", []float32{0, 1, 0, 0})
	put("both", []float32{0.7, 0.7, 0, 0})
	near := []index.Hit{{ID: "close", Score: 0.99}, {ID: "both", Score: 0.7}}
	ids := func(hs []index.Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	// Strong keyword match (score = the query's weight): vectors step aside.
	if got := ids(s.Blend([]index.Hit{{ID: "far", Score: 2}}, 2, near, q, "m", 0.1, 0, 10)); len(got) != 3 || got[0] != "far" {
		t.Fatalf("strong keyword: %v", got)
	}
	// Weak keyword match: the close vector first; "both" above "far".
	// (unread −1: an endpoint's model, the rule before the unread share)
	weak := []index.Hit{{ID: "far", Score: 0.4}, {ID: "both", Score: 0.3}}
	for _, unread := range []float64{0, -1} {
		got := ids(s.Blend(weak, 2, near, q, "m", 0.1, unread, 10))
		if len(got) != 3 || got[0] != "close" || got[1] != "both" {
			t.Fatalf("weak keyword, unread %v: %v", unread, got)
		}
	}
	// The same weak match in words the model cannot read: the keyword order stands.
	if got := ids(s.Blend(weak, 2, near, q, "m", 0.1, 1, 10)); len(got) != 3 || got[0] != "far" || got[1] != "both" {
		t.Fatalf("weak keyword, unread query: %v", got)
	}
	if got := s.Blend(nil, 2, near, q, "m", 0.1, 0, 1); len(got) != 1 || got[0].ID != "close" {
		t.Fatalf("vectors only, limit 1: %v", got)
	}
}

// BenchmarkScan100k is the vector part of a hybrid recall at 100k
// memories of 384 dimensions: the 8-bit dot product over every vector of
// a Set, and the Set's heap per vector (entry, id, position).
func BenchmarkScan100k(b *testing.B) {
	const n = 100_000
	r := rand.New(rand.NewPCG(3, 4))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := New()
	for i := range n {
		scale, q := Quantize(randomUnit(r, 384))
		s.Put(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), &Entry{Model: "all-MiniLM-L6-v2", Scale: scale, Q: q})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	qq := quantizeQuery(randomUnit(r, 384))
	b.ReportAllocs()
	for b.Loop() {
		var top float64
		for _, e := range s.es {
			top = max(top, qq.cos(e))
		}
		_ = top
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/vector")
	runtime.KeepAlive(s)
}

// TestDotKernelMatchesGo: the kernel in use (assembly on amd64 with AVX2)
// gives the portable loop's sum at every length and at the extremes.
func TestDotKernelMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 1100 {
		a, b := make([]int8, n), make([]int16, n)
		for i := range a {
			a[i], b[i] = int8(r.IntN(256)-128), int16(r.IntN(65536)-32768)
			if n%7 == 0 { // the extremes: every term at its largest
				a[i], b[i] = -128, -32768
			}
		}
		var want int64
		for i := range a {
			want += int64(a[i]) * int64(b[i])
		}
		if got := dotInt8(a, b); got != want {
			t.Fatalf("n %d: %d, want %d", n, got, want)
		}
	}
}

// TestNearestIsTheFilteredSort: Nearest's one pass gives the first limit
// of every matching vector by ByScore's order (ties by id included), for
// filters that leave most, a third, a few or none, beside vectors of
// another model or size and of memories the index does not hold.
func TestNearestIsTheFilteredSort(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	idx := index.New()
	s := New()
	shared := make([][]float32, 40) // reused vectors: equal scores
	for i := range shared {
		shared[i] = randomUnit(r, 48)
	}
	namespaces := []string{"a", "b", "c", "rare"}
	var live []string
	for i := range 3000 {
		id := fmt.Sprintf("m%05d", (i*7919)%3000) // ids not in scan order
		v, model := shared[r.IntN(len(shared))], "m"
		switch {
		case i%10 == 0:
			v = randomUnit(r, 48)
		case i%97 == 0:
			model = "other"
		case i%89 == 0:
			v = randomUnit(r, 32)
		}
		scale, q := Quantize(v)
		s.Put(id, &Entry{Model: model, Scale: scale, Q: q})
		if i%50 == 3 {
			continue // a vector whose memory is gone
		}
		ns := namespaces[min(3, i%3)]
		if i%100 == 1 {
			ns = "rare"
		}
		live = append(live, id)
		m := &aimemoryv1.Memory{Id: id, Namespace: ns}
		if err := idx.Load(m, func(func([]byte, uint32)) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	idx.Loaded()
	for _, id := range live[:100] { // a few removed again
		s.Put(id, nil)
	}
	for _, ns := range []string{"", "a", "rare", "none"} {
		f, err := index.CompileFilter(&aimemoryv1.Filter{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		for _, minCos := range []float64{-1, 0.2} {
			q := randomUnit(r, 48)
			qq := quantizeQuery(q)
			var all []index.Hit
			for i, e := range s.es {
				if ok := idx.Matching([]string{s.ids[i]}, f, 1)[0]; ok && e.Model == "m" && len(e.Q) == 48 {
					if d := qq.cos(e); d >= minCos {
						all = append(all, index.Hit{ID: s.ids[i], Score: d})
					}
				}
			}
			all = ByScore(all)
			for _, limit := range []int{1, 7, 50, 500, 5000} {
				got := s.Nearest(idx, f, q, "m", limit, minCos, 1)
				want := all[:min(limit, len(all))]
				if !slices.Equal(got, want) && len(got)+len(want) > 0 {
					t.Fatalf("ns %q minCos %v limit %d: %d hits %v…\nwant %d %v…", ns, minCos, limit, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
				}
			}
		}
	}
	if got := s.Nearest(idx, nil, randomUnit(r, 48), "absent", 5, -1, 1); len(got) != 0 {
		t.Fatalf("a model with no vectors: %v", got)
	}
}
