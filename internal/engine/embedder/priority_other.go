//go:build !linux

package embedder

// lowPriority: only Linux sets a thread's priority; elsewhere background
// embedding runs at the engine's.
func lowPriority() {}
