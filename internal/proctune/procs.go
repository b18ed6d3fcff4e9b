// Package proctune holds the process settings of the ai-memory processes
// (host, engine, first-party plugins), each applied from main with the
// benchmark that justifies it. The SDK imposes none of them on a plugin.
package proctune

import (
	"os"
	"runtime"
)

// OneProcessor runs the Go code of this process on one OS thread at a
// time (GOMAXPROCS=1), unless the environment sets GOMAXPROCS. The MCP
// host and the plugins each run one call at a time almost always, and
// spend most of a call waiting for the next hop: with a P per core, the
// scheduler spins threads up to look for work and parks them again, a
// sleep and a wake-up per hand-off (on this 2-core machine, BenchmarkCallOverMCP,
// 1 P in host and plugin: their sleeps per call -40%, and more CPU left
// for the engine, whose commits and index are what limits stores in flight).
// The engine keeps a P per core: at one P it was the bottleneck of
// stores in flight (see docs/performance.md, "Speed-ups, measured against
// their removal").
func OneProcessor() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// Plugin applies the first-party plugins' process settings: one P
// (OneProcessor) and the profiles ProfileDirEnv asks for.
func Plugin(name string) {
	OneProcessor()
	StartProfiling(name)
}
