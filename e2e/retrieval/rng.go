package retrieval

import "math"

// rng is SplitMix64: a tiny generator whose stream is fixed by this code
// alone, so the generated collections never depend on a library's version.
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float is uniform in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// intn is uniform in [0, n).
func (r *rng) intn(n int) int { return int(r.float() * float64(n)) }

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return r.float() < p }

// normal is a standard normal draw (Box-Muller).
func (r *rng) normal() float64 {
	u := 1 - r.float()
	return math.Sqrt(-2*math.Log(u)) * math.Cos(2*math.Pi*r.float())
}

// pick returns one element of xs.
func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

// zipf draws ranks 0..n-1 with weight 1/(rank+1)^s.
type zipf struct{ cum []float64 }

func newZipf(n int, s float64) *zipf {
	z := &zipf{cum: make([]float64, n)}
	total := 0.0
	for i := range n {
		total += 1 / math.Pow(float64(i+1), s)
		z.cum[i] = total
	}
	for i := range z.cum {
		z.cum[i] /= total
	}
	return z
}

func (z *zipf) draw(r *rng) int {
	u := r.float()
	lo, hi := 0, len(z.cum)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if z.cum[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
