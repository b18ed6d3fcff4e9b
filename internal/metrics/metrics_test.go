package metrics

import (
	"testing"
	"time"
)

// BenchmarkObserveCall is what a tool call pays for its metrics: a
// counter increment and a histogram observation, found by label values.
func BenchmarkObserveCall(b *testing.B) {
	h := NewHost()
	for b.Loop() {
		h.ObserveCall("memory_store", OK, 3*time.Millisecond)
	}
}

// BenchmarkObserveCallOff is the same call site with metrics off.
func BenchmarkObserveCallOff(b *testing.B) {
	var h *Host
	for b.Loop() {
		h.ObserveCall("memory_store", OK, 3*time.Millisecond)
	}
}
