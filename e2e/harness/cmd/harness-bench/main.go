// Command harness-bench counts first-try expansions in the real harnesses
// (make harness-bench): for each mode and model latency, N runs of
// memory_capabilities {"family": "graph", "include_schema": true} followed
// by a direct call of memory_link. A run succeeds when the very next model
// request offers memory_link and the call returns its result.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ai-memory/ai-memory/e2e/harness"
)

type count struct {
	Mode     string         `json:"mode"`
	Latency  string         `json:"latency"`
	Runs     int            `json:"runs"`
	FirstTry int            `json:"first_try"`
	Failures map[string]int `json:"failures,omitempty"`
	Seconds  float64        `json:"seconds"`
}

func main() {
	bin := flag.String("bin", "bin", "directory holding ai-memory and its plugins (make build)")
	dir := flag.String("dir", filepath.Join("e2e", "harness"), "e2e/harness, with the harnesses installed (npm ci)")
	runs := flag.Int("runs", 20, "runs per mode and latency")
	modes := flag.String("modes", "claude,claude-ts,claude-ts-deferred,claude-http,gemini,gemini-http", "harness modes (e2e/harness/run.go)")
	latencies := flag.String("latency", "0s,2s", "model latencies: how long the mock holds each scripted answer")
	out := flag.String("out", "", "also write the counts as JSON to this file")
	flag.Parse()

	aim, err := filepath.Abs(filepath.Join(*bin, "ai-memory"))
	check(err)
	abs, err := filepath.Abs(*dir)
	check(err)
	setup := harness.Setup{Dir: abs, AIMemory: aim, Timeout: 3 * time.Minute}
	check(setup.Installed())

	var counts []count
	for _, l := range strings.Split(*latencies, ",") {
		latency, err := time.ParseDuration(l)
		check(err)
		for _, name := range strings.Split(*modes, ",") {
			m, ok := harness.ModeNamed(name)
			if !ok {
				check(fmt.Errorf("unknown mode %q", name))
			}
			counts = append(counts, bench(setup, m, latency, *runs))
		}
	}
	fmt.Println("\nmode                latency  first try")
	for _, c := range counts {
		fmt.Printf("%-19s %-8s %d/%d  (%.0f s)\n", c.Mode, c.Latency, c.FirstTry, c.Runs, c.Seconds)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(counts, "", " ")
		check(os.WriteFile(*out, b, 0o644))
	}
}

// bench runs one mode n times on one data dir, a fresh HOME each run.
func bench(setup harness.Setup, m harness.Mode, latency time.Duration, n int) count {
	tmp, err := os.MkdirTemp("", "aim-bench")
	check(err)
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "d")
	ids, err := harness.Seed(setup.AIMemory, data, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp})
	check(err)
	c := count{Mode: m.Name, Latency: latency.String(), Runs: n, Failures: map[string]int{}}
	start := time.Now()
	for i := 1; i <= n; i++ {
		ok, why, o, err := setup.Expand(context.Background(), m, data, ids, latency)
		if err != nil {
			why = "run failed: " + strings.SplitN(err.Error(), "\n", 2)[0]
		}
		if ok {
			c.FirstTry++
		} else {
			c.Failures[why]++
		}
		took := time.Duration(0)
		if o != nil {
			took = o.Elapsed.Round(time.Millisecond)
		}
		fmt.Printf("%s latency %s run %d/%d: %v %s (%s)\n", m.Name, latency, i, n, ok, why, took)
	}
	c.Seconds = time.Since(start).Seconds()
	return c
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness-bench:", err)
		os.Exit(1)
	}
}
