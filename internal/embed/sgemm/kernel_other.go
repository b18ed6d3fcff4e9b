//go:build !amd64 || purego

package sgemm

// Accelerated reports whether the assembly micro-kernel is in use.
const Accelerated = false

func kernel(k int, a *[mr][]float32, b *[nr][]float32, out *[mr * nr]float32) {
	kernelGo(k, a, b, out)
}
