//go:build amd64 && !purego

package vecset

import "golang.org/x/sys/cpu"

var haveAVX2 = cpu.X86.HasAVX2

// dotAVX2 is the dot product of n 8-bit and 16-bit components, n a
// multiple of 16 and at most dotChunk (assembly).
//
//go:noescape
func dotAVX2(a *int8, b *int16, n int) int32

func dotKernel(a []int8, b []int16) int32 {
	n := len(a) &^ 15
	if !haveAVX2 || n == 0 {
		return dotGo(a, b)
	}
	s := dotAVX2(&a[0], &b[0], n)
	if n < len(a) {
		s += dotGo(a[n:], b[n:len(a)])
	}
	return s
}
