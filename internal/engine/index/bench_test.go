package index

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// benchIndex is an index of n memories whose words follow a Zipf law over
// 3,000 words, in 20 namespaces, and a source of more such memories.
func benchIndex(b *testing.B, n int) (*Index, func(i int) Change) {
	r := rand.New(rand.NewPCG(5, 6))
	zipf := rand.NewZipf(r, 1.1, 2, 2999)
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%d", zipf.Uint64())
		}
		return strings.Join(ws, " ")
	}
	next := func(i int) Change {
		m := &aimemoryv1.Memory{Id: fmt.Sprintf("id-%07d", i), Title: words(3+r.IntN(5)) + fmt.Sprint(" ", i),
			Content: words(20 + r.IntN(61)), Namespace: fmt.Sprintf("ns%d", r.IntN(20)), Tier: "long"}
		terms, _ := keyword.Document(m.Title, m.Content, m.Tags)
		return Change{ID: m.Id, Memory: m, Reindex: true, NewTerms: terms}
	}
	x := New()
	for i := range n {
		x.Apply([]Change{next(i)})
	}
	b.ResetTimer()
	return x, next
}

// BenchmarkApplyNew is the index half of a store: one new memory applied
// to an index of 10k.
func BenchmarkApplyNew(b *testing.B) {
	x, next := benchIndex(b, 10_000)
	i := 10_000
	for b.Loop() {
		b.StopTimer()
		c := next(i)
		i++
		b.StartTimer()
		x.Apply([]Change{c})
	}
}

// BenchmarkRelated is a store's contradiction check: the memories of the
// same namespace that share the most title terms, in an index of 10k.
func BenchmarkRelated(b *testing.B) {
	x, next := benchIndex(b, 10_000)
	var cs []Change
	for i := range 100 {
		cs = append(cs, next(20_000+i))
	}
	i := 0
	for b.Loop() {
		m := cs[i%len(cs)].Memory
		i++
		terms := keyword.Terms(nil, m.Title)
		x.Related(terms, m.Namespace, "", 5)
	}
}
