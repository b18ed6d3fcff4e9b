package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/tokencost"
)

func (e *env) doctor(args ...string) (string, int) {
	e.t.Helper()
	cmd := command(e.t, filepath.Join(e.binDir, "ai-memory"), append([]string{"doctor"}, args...)...)
	cmd.Env = e.environ()
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		out = append(out, ee.Stderr...)
	} else if err != nil {
		e.t.Fatal(err)
	}
	return string(out), code
}

type tokenReport struct {
	SchemaVersion string   `json:"schema_version"`
	Tokenizer     string   `json:"tokenizer"`
	ActiveProfile []string `json:"active_profile"`
	ActiveTools   int      `json:"active_tool_count"`
	ActiveTotal   int      `json:"active_total_tokens"`
	FullTotal     int      `json:"full_profile_total_tokens"`
	Savings       int      `json:"savings_tokens"`
	SavingsPct    string   `json:"savings_pct"`
	Families      []struct {
		Name      string `json:"name"`
		ToolCount int    `json:"tool_count"`
		Tokens    int    `json:"tokens"`
		Loaded    bool   `json:"loaded"`
	} `json:"families"`
	Tools []struct {
		Name   string `json:"name"`
		Tokens int    `json:"tokens"`
		Family string `json:"family"`
		Loaded bool   `json:"loaded_under_active_profile"`
	} `json:"tools"`
}

func (e *env) tokens(args ...string) tokenReport {
	e.t.Helper()
	out, code := e.doctor(append([]string{"--tokens"}, args...)...)
	if code != 0 {
		e.t.Fatalf("doctor --tokens %v: exit %d\n%s", args, code, out)
	}
	var r tokenReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		e.t.Fatalf("doctor --tokens %v is not JSON: %v\n%s", args, err, out)
	}
	return r
}

// capturedToolsCost counts a live host's tools/list `tools` array bytes.
func capturedToolsCost(t *testing.T, s *rawSession) (int, map[string]int) {
	s.request("tools/list", map[string]any{})
	var msg struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	json.Unmarshal(s.lastRaw, &msg) // RawMessage keeps the bytes exactly as sent
	per := map[string]int{}
	for _, tool := range msg.Result.Tools {
		var n struct{ Name string }
		json.Unmarshal(tool, &n)
		per[n.Name] = tokencost.Count(string(tool))
	}
	array, _ := json.Marshal(msg.Result.Tools)
	return tokencost.Count(string(array)), per
}

func TestDoctorTokensMatchesALiveCapture(t *testing.T) {
	e := newEnv(t)
	for _, profile := range []string{"core", "full"} {
		r := e.tokens("--json", "--profile", profile)
		// The raw capture's bytes differ from mcp-go's re-encoding only if the
		// host changed them; the counts must agree exactly.
		s := e.startRaw("--profile", profile)
		live, _ := capturedToolsCost(t, s)
		if r.ActiveTotal != live {
			t.Errorf("%s: doctor says %d tokens, a live tools/list costs %d", profile, r.ActiveTotal, live)
		}
	}
}

func TestDoctorOutputShapes(t *testing.T) {
	e := newEnv(t)
	r := e.tokens("--raw-table")
	if r.SchemaVersion != "v0.6.4-tokens-1" || r.Tokenizer != "cl100k_base" || strings.Join(r.ActiveProfile, ",") != "core" ||
		r.ActiveTools != 6 || len(r.Tools) == 0 || r.Savings != r.FullTotal-r.ActiveTotal || r.SavingsPct == "" {
		t.Fatalf("raw table = %+v", r)
	}
	if plain := e.tokens("--json"); plain.Tools != nil {
		t.Error("--json without --raw-table must not carry the per-tool table")
	}
	human, code := e.doctor("--tokens", "--profile", "full")
	if code != 0 || !strings.Contains(human, "Savings") || !strings.Contains(human, "cl100k_base") {
		t.Errorf("human form (exit %d):\n%s", code, human)
	}
	if out, code := e.doctor("--tokens", "--profile", "nope"); code != 2 || !strings.Contains(out, "nope") {
		t.Errorf("bad profile: exit %d\n%s", code, out)
	}
	health, _ := e.doctor()
	for _, want := range []string{"config", "data dir", "engine", "plugin ai-memory-core"} {
		if !strings.Contains(health, want) {
			t.Errorf("health report lacks %q:\n%s", want, health)
		}
	}
}

// TestTokenBudgets guards the cost of the wire surface: every agent pays it
// on every request.
func TestTokenBudgets(t *testing.T) {
	e := newEnv(t)
	core := e.tokens("--json", "--profile", "core")
	full := e.tokens("--raw-table", "--profile", "full")
	t.Logf("core %d tokens, full %d tokens", core.ActiveTotal, full.ActiveTotal)
	if core.ActiveTotal > 860 {
		t.Errorf("core surface costs %d cl100k tokens, budget 860", core.ActiveTotal)
	}
	// Issue 11 aimed at 3,500 for all 43 tools; with every property keeping
	// its type and a description the envelope alone is about 2,600 (see
	// README on doctor --tokens), and issue 24 spells out every enumeration
	// (source, relation, events), so this guards what is reached against
	// creep. TestClaudeCodeSurfaceBudget measures what harnesses send.
	if full.ActiveTotal > 3820 {
		t.Errorf("full surface costs %d cl100k tokens, budget 3820", full.ActiveTotal)
	}
	// Families whose tools are all served guard against creep one by one
	// (always-on grows with the family names, here the test plugin's too);
	// governance and other still gain tools, and power has its own test.
	budgets := map[string]int{"always-on": 130, "core": 690, "lifecycle": 425, "graph": 775, "meta": 225, "archive": 270}
	for _, f := range full.Families {
		if b, ok := budgets[f.Name]; ok && f.Tokens > b {
			t.Errorf("family %s costs %d cl100k tokens, budget %d", f.Name, f.Tokens, b)
		}
		delete(budgets, f.Name)
	}
	for name := range budgets {
		t.Errorf("family %s missing from the report", name)
	}
	for _, tool := range full.Tools {
		if tool.Tokens > 250 {
			t.Errorf("%s costs %d tokens, budget 250", tool.Name, tool.Tokens)
		}
	}
	// Every parameter is still described.
	s := e.startRaw("--profile", "full")
	resp := s.request("tools/list", map[string]any{})
	for _, raw := range resp["result"].(map[string]any)["tools"].([]any) {
		tool := raw.(map[string]any)
		props, _ := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
		for name, p := range props {
			if d, _ := p.(map[string]any)["description"].(string); strings.TrimSpace(d) == "" {
				t.Errorf("%s.%s has no description", tool["name"], name)
			}
		}
	}
}
