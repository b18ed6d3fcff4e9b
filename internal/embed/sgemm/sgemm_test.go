package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func naive(m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*lda+p]) * float64(b[j*ldb+p])
			}
			if bias != nil {
				s += float64(bias[j])
			}
			c[i*ldc+j] = float32(s)
		}
	}
}

func random(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// TestMulTMatchesNaive covers every edge the blocking has: row and column
// counts that are not multiples of the block, k below, at and off the
// vector width, strides wider than k, with and without bias, past a panel.
func TestMulTMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{1, 3, 4, 5, 13, 64, 70} {
		for _, n := range []int{1, 2, 3, 7, 32} {
			for _, k := range []int{1, 7, 8, 9, 32, 41} {
				for _, withBias := range []bool{false, true} {
					lda, ldb, ldc := k+3, k+5, n+2
					a, b, c := random(r, m*lda), random(r, n*ldb), make([]float32, m*ldc)
					want := make([]float32, m*ldc)
					var bias []float32
					if withBias {
						bias = random(r, n)
					}
					MulT(m, n, k, a, lda, b, ldb, bias, c, ldc)
					naive(m, n, k, a, lda, b, ldb, bias, want, ldc)
					for i := range m {
						for j := range n {
							if d := math.Abs(float64(c[i*ldc+j] - want[i*ldc+j])); d > 1e-4 {
								t.Fatalf("m=%d n=%d k=%d bias=%v: c[%d,%d] = %g, want %g", m, n, k, withBias, i, j, c[i*ldc+j], want[i*ldc+j])
							}
						}
					}
				}
			}
		}
	}
}

// TestPortableKernelMatches: the Go kernel gives what the assembly does, so
// machines without AVX2 compute the same vectors.
func TestPortableKernelMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const k = 72
	var a [mr][]float32
	var b [nr][]float32
	for i := range a {
		a[i] = random(r, k)
	}
	for i := range b {
		b[i] = random(r, k)
	}
	var got, want [mr * nr]float32
	kernel(k, &a, &b, &got)
	kernelGo(k, &a, &b, &want)
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4 {
			t.Fatalf("sum %d: kernel %g, portable %g", i, got[i], want[i])
		}
	}
}

// BenchmarkMulT is a MiniLM feed-forward layer for a 12-token query
// (12×1536 by 384×1536ᵀ); GMAC/s is the figure that matters.
func BenchmarkMulT(b *testing.B) {
	for _, s := range []struct {
		name    string
		m, n, k int
	}{{"query12x384x1536", 12, 384, 1536}, {"memory50x1536x384", 50, 1536, 384}, {"batch256x384x384", 256, 384, 384}} {
		b.Run(s.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			a, w, c := random(r, s.m*s.k), random(r, s.n*s.k), make([]float32, s.m*s.n)
			b.ResetTimer()
			for b.Loop() {
				MulT(s.m, s.n, s.k, a, s.k, w, s.k, nil, c, s.n)
			}
			b.ReportMetric(float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}
