package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/e2e/harness"
)

// TestRealHarnesses runs Claude Code (tool search off and on), Codex CLI
// and Gemini CLI, the versions e2e/harness/package.json pins, each against
// a scripted mock of its provider on loopback, with ai-memory installed by
// `ai-memory install <harness> --apply`. Per mode: the first request lists
// the core tools; the definitions are recorded per profile (the budget is
// checked on Claude Code's request); a store, a bridged call (which adds
// nothing to later requests) and, where the harness re-lists, an expansion
// whose tool the very next request offers and a direct call runs; and a
// recall in a second process finds the stored memory.
func TestRealHarnesses(t *testing.T) {
	setup := harness.Setup{Dir: filepath.Join(repoRoot(), "e2e", "harness"), AIMemory: filepath.Join(bins, "ai-memory"), Timeout: 3 * time.Minute}
	if err := setup.Installed(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and `npm ci --prefix e2e/harness` are required in CI: %v", err)
		}
		t.Skipf("needs node and `npm ci --prefix e2e/harness --ignore-scripts` (%v)", err)
	}
	start := time.Now()
	defs := map[string]any{}
	for _, m := range harness.Modes {
		t.Run(m.Name, func(t *testing.T) { defs[m.Name] = testHarness(t, setup, m) })
	}
	t.Logf("real-harness suite: %d modes in %s", len(harness.Modes), time.Since(start).Round(time.Second))
	if out := os.Getenv("AI_MEMORY_HARNESS_OUT"); out != "" {
		b, _ := json.MarshalIndent(defs, "", " ")
		os.WriteFile(out, b, 0o644)
	}
}

// defsRecord is a profile's definitions in a mode's first request.
type defsRecord struct {
	Tools        int  `json:"tools"`
	Bytes        int  `json:"bytes"`
	Tokens       int  `json:"tokens"`
	Instructions bool `json:"instructions"`
}

func record(t *testing.T, mode, profile string, reqs []harness.Request) defsRecord {
	t.Helper()
	first := firstMain(t, reqs)
	s := harness.Inspect(first.Body)
	r := defsRecord{Tools: len(s.Tools), Bytes: s.DefBytes(), Tokens: s.DefTokens(), Instructions: s.Instructions}
	t.Logf("%s %s: %d tools, definitions %d bytes, %d tokens; instructions in the request: %v (%d tokens)",
		mode, profile, r.Tools, r.Bytes, r.Tokens, r.Instructions, harness.InstructionTokens())
	return r
}

func firstMain(t *testing.T, reqs []harness.Request) harness.Request {
	t.Helper()
	for _, r := range reqs {
		if r.Main && r.Step == 0 {
			return r
		}
	}
	t.Fatalf("no scripted request reached the mock")
	return harness.Request{}
}

// step returns what the request answering step i carried.
func step(t *testing.T, reqs []harness.Request, i int) harness.Seen {
	t.Helper()
	for _, r := range reqs {
		if r.Main && r.Step == i {
			return harness.Inspect(r.Body)
		}
	}
	t.Fatalf("no request answered step %d: %s", i, harness.Describe(reqs))
	return harness.Seen{}
}

func testHarness(t *testing.T, setup harness.Setup, m harness.Mode) map[string]defsRecord {
	e := newEnv(t)
	ids, err := harness.Seed(setup.AIMemory, e.dataDir, e.environ())
	if err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("zq%x", time.Now().UnixNano())
	scripts := harness.SessionScripts(m, ids, mark)
	ctx := context.Background()
	run := func(profile, prompt string) []harness.Request {
		t.Helper()
		o, err := setup.Do(ctx, harness.Run{Mode: m, Profile: profile, DataDir: e.dataDir, Prompt: prompt, Scripts: scripts})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %s (%s): %s", m.Name, profile, o.Elapsed.Round(time.Millisecond), harness.Describe(o.Requests))
		return o.Requests
	}

	work := run("core", "SCRIPT:work Remember the staging database, then look at the graph.")
	// The first request lists the core tools, and only them.
	if got := harness.CoreTools(work); !slices.Equal(got, coreSurface) {
		t.Errorf("first request offers %v, want %v", got, coreSurface)
	}
	core := record(t, m.Name, "core", work)
	if r, ok := step(t, work, 1).ResultOf("memory_store"); !ok || r.IsError {
		t.Errorf("store: %+v (found %v)", r, ok)
	}
	// The bridged call ran, and the request after it offers what the first did.
	afterBridge := step(t, work, 2)
	if r, ok := afterBridge.ResultOf("memory_capabilities"); !ok || r.IsError {
		t.Errorf("bridged memory_get_links: %+v (found %v)", r, ok)
	}
	if first := step(t, work, 0); !slices.Equal(afterBridge.Tools, first.Tools) || afterBridge.DefBytes() != first.DefBytes() {
		t.Errorf("the bridge changed the surface: %v (%d bytes) after, %v (%d bytes) before",
			afterBridge.Tools, afterBridge.DefBytes(), first.Tools, first.DefBytes())
	}
	if harness.ReLists(m) {
		if ok, why := harness.JudgeExpansion(work, 2); !ok {
			t.Errorf("expansion not on the first try: %s", why)
		}
	}

	// A second process, with a fresh HOME, recalls what the first stored.
	recall := run("core", "SCRIPT:recall Where is the staging database?")
	if r, ok := step(t, recall, 1).ResultOf("memory_recall"); !ok || r.IsError || !strings.Contains(r.Text, mark) {
		t.Errorf("recall in a later run: %+v (found %v), want the marker %s", r, ok, mark)
	}

	// claude -p connects MCP servers in the background; measuring full, it
	// waits for them, so its first request holds every schema.
	fm := m
	if m.Harness == "claude" {
		fm.Env = append(slices.Clone(m.Env), "MCP_CONNECTION_NONBLOCKING=false")
	}
	o, err := setup.Do(ctx, harness.Run{Mode: fm, Profile: "full", DataDir: e.dataDir, Prompt: "SCRIPT:hello Say hello.", Scripts: scripts})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s full (%s): %s", m.Name, o.Elapsed.Round(time.Millisecond), harness.Describe(o.Requests))
	full := record(t, m.Name, "full", o.Requests)
	// The budget (claudeCodeBudget) holds where Claude Code sends every
	// schema: its tool search off, over stdio and over HTTP.
	if harness.SendsUntypedSchemas(m) {
		// Claude Code calls a tool it was sent without "properties", and
		// its model's "1" for a limit it was sent without a type is taken.
		for i, s := range harness.UntypedSteps {
			if r, ok := step(t, o.Requests, i+1).ResultOf(s.Tool); !ok || r.IsError {
				t.Errorf("%s %v under full: %+v (found %v)", s.Tool, s.Args, r, ok)
			}
		}
		instr := 0
		if core.Instructions {
			instr = harness.InstructionTokens()
		}
		tools := map[string]int{"core": len(coreSurface), "full": 43}
		for profile, r := range map[string]defsRecord{"core": core, "full": full} {
			if want := tools[profile]; r.Tools != want {
				t.Errorf("%s: Claude Code's first request offers %d tools, want %d", profile, r.Tools, want)
			}
			if n := r.Tokens + instr; n > claudeCodeBudget[profile] {
				t.Errorf("%s costs %d tokens in Claude Code's request (definitions %d + instructions %d), over the budget of %d", profile, n, r.Tokens, instr, claudeCodeBudget[profile])
			}
		}
	}
	return map[string]defsRecord{"core": core, "full": full}
}
