// Package sgemm multiplies float32 matrices the way a transformer's linear
// layers need: C = A·Bᵀ (+ bias), A's rows being tokens and B's rows a
// layer's output units, both contiguous along the shared dimension k (the
// layout PyTorch stores weights in, so they are used where they lie,
// mmapped, without a transposed copy).
//
// The work is cut into 4×3 blocks of dot products (four A rows against
// three B rows), each one call of a micro-kernel that keeps the twelve
// running sums in registers: AVX2+FMA assembly on amd64 CPUs that have it,
// portable Go everywhere else. Rows are walked in panels that keep the A
// panel in L2 while B streams through once per panel.
package sgemm

const (
	mr = 4 // A rows per micro-kernel call
	nr = 3 // B rows per micro-kernel call

	// panelRows bounds the A rows reused against every B row block, so a
	// panel of up to 64 rows of 1,536 floats (384 KiB) stays in L2.
	panelRows = 64
)

// MulT sets c[i*ldc+j] = Σₚ a[i*lda+p]·b[j*ldb+p] (+ bias[j] when bias is
// not nil) for i < m, j < n, p < k.
func MulT(m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	// Bounds once, so the kernels may index without checks.
	_ = a[(m-1)*lda+k-1]
	_ = b[(n-1)*ldb+k-1]
	_ = c[(m-1)*ldc+n-1]
	if bias != nil {
		_ = bias[n-1]
	}
	var out [mr * nr]float32
	var ar [mr][]float32
	var br [nr][]float32
	for i0 := 0; i0 < m; i0 += panelRows {
		i1 := min(i0+panelRows, m)
		for j := 0; j < n; j += nr {
			// A block past the last row or column repeats it: the kernel
			// always computes 4×3, the extra sums are dropped.
			for t := range nr {
				jj := min(j+t, n-1)
				br[t] = b[jj*ldb : jj*ldb+k]
			}
			for i := i0; i < i1; i += mr {
				for t := range mr {
					ii := min(i+t, i1-1)
					ar[t] = a[ii*lda : ii*lda+k]
				}
				kernel(k, &ar, &br, &out)
				for t := range mr {
					if i+t >= i1 {
						break
					}
					row := c[(i+t)*ldc:]
					for u := range nr {
						if j+u >= n {
							break
						}
						v := out[t*nr+u]
						if bias != nil {
							v += bias[j+u]
						}
						row[j+u] = v
					}
				}
			}
		}
	}
}

// kernelGo is the portable micro-kernel: out[t*nr+u] = a[t]·b[u].
func kernelGo(k int, a *[mr][]float32, b *[nr][]float32, out *[mr * nr]float32) {
	for t := range mr {
		at := a[t][:k]
		b0, b1, b2 := b[0][:k], b[1][:k], b[2][:k]
		var s0, s1, s2 float32
		for p, x := range at {
			s0 += x * b0[p]
			s1 += x * b1[p]
			s2 += x * b2[p]
		}
		out[t*nr], out[t*nr+1], out[t*nr+2] = s0, s1, s2
	}
}
