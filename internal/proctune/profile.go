package proctune

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

// ProfileDirEnv, when set, makes each ai-memory process (host, engine,
// plugins) profile itself: a CPU profile of its first ProfileSecondsEnv
// seconds (default 20), then an allocation profile, written to
// <dir>/<name>-<pid>.cpu.pprof and .allocs.pprof. Unset, it costs nothing.
// It exists to find where per-call time goes under a steady load
// (`go tool pprof bin/ai-memory <dir>/host-*.cpu.pprof`). ProfileAfterEnv
// delays the start by that many seconds, to leave out a benchmark's setup.
const (
	ProfileDirEnv     = "AI_MEMORY_PROFILE_DIR"
	ProfileSecondsEnv = "AI_MEMORY_PROFILE_SECONDS"
	ProfileAfterEnv   = "AI_MEMORY_PROFILE_AFTER"
)

// StartProfiling starts the profiles ProfileDirEnv asks for, if any.
func StartProfiling(name string) {
	dir := os.Getenv(ProfileDirEnv)
	if dir == "" {
		return
	}
	secs, err := strconv.Atoi(os.Getenv(ProfileSecondsEnv))
	if err != nil || secs <= 0 {
		secs = 20
	}
	if after, err := strconv.ParseFloat(os.Getenv(ProfileAfterEnv), 64); err == nil && after > 0 {
		time.AfterFunc(time.Duration(after*float64(time.Second)), func() { startProfiles(dir, name, secs) })
		return
	}
	startProfiles(dir, name, secs)
}

func startProfiles(dir, name string, secs int) {
	base := filepath.Join(dir, fmt.Sprintf("%s-%d", name, os.Getpid()))
	f, err := os.Create(base + ".cpu.pprof")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: profile: %v\n", name, err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "%s: profile: %v\n", name, err)
		f.Close()
		return
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		pprof.StopCPUProfile()
		f.Close()
		runtime.GC()
		if a, err := os.Create(base + ".allocs.pprof"); err == nil {
			pprof.Lookup("allocs").WriteTo(a, 0)
			a.Close()
		}
	})
}
