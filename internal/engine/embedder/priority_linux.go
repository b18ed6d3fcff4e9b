package embedder

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lowPriority runs the calling goroutine on an OS thread of its own at
// nice 10 for the rest of its life, so background embedding yields the CPU
// to queries and stores. The thread is never handed back (its niceness
// cannot be undone without privilege); it ends with the goroutine.
func lowPriority() {
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 10)
}
