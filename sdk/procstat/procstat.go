// Package procstat reads what processes have cost so far from Linux's
// /proc: CPU time, how often their threads slept, resident memory. Benchmarks that
// drive several processes (host, plugins, engine) report these per call,
// figures that other load on the machine disturbs far less than latency.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPU is the user plus system time of the processes so far (all their
// threads); a process that is gone counts nothing.
func CPU(pids ...int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+2:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// Sleeps counts the times the processes' threads have slept so far
// (voluntary context switches, /proc/<pid>/task/*/status): a thread that
// waits for work parks in the kernel, and waking it costs both sides.
func Sleeps(pids ...int) int64 {
	var n int64
	for _, pid := range pids {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
		for _, t := range tasks {
			st, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(st), "\n") {
				if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
					c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					n += c
				}
			}
		}
	}
	return n
}

// RSS is the resident memory of a process now, in bytes (VmRSS of
// /proc/<pid>/status); 0 for a process that is gone.
func RSS(pid int) int64 {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
