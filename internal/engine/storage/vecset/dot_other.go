//go:build !amd64 || purego

package vecset

func dotKernel(a []int8, b []int16) int32 { return dotGo(a, b) }
