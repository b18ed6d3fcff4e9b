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

// Tool-surface budgets (issue 24), in cl100k tokens of ai-memory's
// definitions plus its instructions, as Claude Code sends them when it
// sends every schema (tool search off).
const (
	coreBudget = 700
	fullBudget = 3000
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

	full := record(t, m.Name, "full", run("full", "SCRIPT:hello Say hello."))
	if m.Name == "claude" {
		instr := 0
		if core.Instructions {
			instr = harness.InstructionTokens()
		}
		if n := core.Tokens + instr; n > coreBudget {
			t.Errorf("core costs %d tokens in Claude Code's request (definitions %d + instructions %d), over the budget of %d", n, core.Tokens, instr, coreBudget)
		}
		if n := full.Tokens + instr; n > fullBudget {
			t.Errorf("full costs %d tokens in Claude Code's request (definitions %d + instructions %d), over the budget of %d", n, full.Tokens, instr, fullBudget)
		}
	}
	return map[string]defsRecord{"core": core, "full": full}
}
