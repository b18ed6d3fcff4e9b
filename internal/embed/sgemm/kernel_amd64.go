//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// Accelerated reports whether the assembly micro-kernel is in use.
var Accelerated = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot4x3 computes the 4×3 dot products of k8 floats (k8 a multiple of 8)
// starting at a0..a3 and b0..b2 into out (assembly, AVX2+FMA).
//
//go:noescape
func dot4x3(k8 int, a0, a1, a2, a3, b0, b1, b2 *float32, out *[mr * nr]float32)

func kernel(k int, a *[mr][]float32, b *[nr][]float32, out *[mr * nr]float32) {
	if !Accelerated || k < 8 {
		kernelGo(k, a, b, out)
		return
	}
	k8 := k &^ 7
	dot4x3(k8, &a[0][0], &a[1][0], &a[2][0], &a[3][0], &b[0][0], &b[1][0], &b[2][0], out)
	if k8 == k {
		return
	}
	for t := range mr {
		at := a[t][k8:k]
		for u := range nr {
			bu := b[u][k8:k]
			s := out[t*nr+u]
			for p, x := range at {
				s += x * bu[p]
			}
			out[t*nr+u] = s
		}
	}
}
