package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Seed stores two memories through the CLI (env: its environment, nil
// for this process's), for the graph calls to link.
func Seed(aimemory, dataDir string, env []string) ([2]string, error) {
	var ids [2]string
	for i, m := range [][2]string{
		{"Payments service", "The payments service owns the ledger and talks to the bank gateway over mTLS."},
		{"Bank gateway", "The bank gateway batches transfers every 10 minutes and retries 3 times."},
	} {
		cmd := exec.Command(aimemory, "--data-dir", dataDir, "store", "--title", m[0], "--content", m[1], "--tag", "arch", "--json")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			return ids, fmt.Errorf("seed %q: %v", m[0], err)
		}
		var r struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out, &r); err != nil || r.ID == "" {
			return ids, fmt.Errorf("seed %q: no id in %.200s", m[0], out)
		}
		ids[i] = r.ID
	}
	return ids, nil
}

// Steps of the expansion check: load the graph family, then call one of
// its tools directly, as a model that just read its schemas would.
func expansionSteps(ids [2]string) []Step {
	return []Step{
		Call("memory_capabilities", map[string]any{"family": "graph", "include_schema": true}),
		Call("memory_link", map[string]any{"source_id": ids[0], "target_id": ids[1], "relation": "related_to"}),
		Say("expanded"),
	}
}

// SessionScripts are the suite's scripts: "work" stores a memory, runs a
// graph tool through the bridge, then (where the harness re-lists)
// expands the graph family and calls its tool directly; "recall", in a
// later process, recalls the stored memory; "hello" only answers.
func SessionScripts(m Mode, ids [2]string, mark string) map[string][]Step {
	work := []Step{
		Call("memory_store", map[string]any{"title": "Staging database", "content": "The staging database is pg-staging-7 on port 6432 (marker " + mark + ").", "tags": []string{"infra"}}),
		Call("memory_capabilities", map[string]any{"tool": "memory_get_links", "arguments": map[string]any{"id": ids[1]}}),
	}
	if ReLists(m) {
		work = append(work, expansionSteps(ids)...)
	} else {
		work = append(work, Say("done"))
	}
	return map[string][]Step{
		"work":   work,
		"recall": {Call("memory_recall", map[string]any{"context": "staging database port"}), Say("recalled")},
		"hello":  {Say("hello")},
	}
}

// ReLists reports whether a mode's harness acts on tools/list_changed
// (Codex never does: it reaches other families through the bridge).
func ReLists(m Mode) bool { return m.Harness != "codex" }

// ExpansionScripts is the expansion check alone (harness-bench).
func ExpansionScripts(ids [2]string) map[string][]Step {
	return map[string][]Step{"expand": expansionSteps(ids)}
}

// at returns the scripted request that answered step i.
func at(reqs []Request, i int) (Request, bool) {
	for _, r := range reqs {
		if r.Main && r.Step == i {
			return r, true
		}
	}
	return Request{}, false
}

// JudgeExpansion says whether an expansion at step `from` worked on the
// first try: the next request offers the family's tool in full and its
// direct call returned a result, not an error.
func JudgeExpansion(reqs []Request, from int) (bool, string) {
	next, ok := at(reqs, from+1)
	if !ok {
		return false, fmt.Sprintf("no request after the expansion (step %d)", from)
	}
	if !next.Offered || !Inspect(next.Body).Offers("memory_link") {
		return false, "the request after the expansion did not offer memory_link (called it anyway: " + next.Reply + ")"
	}
	after, ok := at(reqs, from+2)
	if !ok {
		return false, "no request after the call of memory_link"
	}
	r, ok := Inspect(after.Body).ResultOf("memory_link")
	switch {
	case !ok:
		return false, "no memory_link result in the history"
	case r.IsError:
		return false, fmt.Sprintf("memory_link failed: %.200s", r.Text)
	}
	return true, ""
}

// Expand runs the expansion check once: a fresh HOME, core profile.
func (s Setup) Expand(ctx context.Context, m Mode, dataDir string, ids [2]string, latency time.Duration) (bool, string, *Outcome, error) {
	o, err := s.Do(ctx, Run{Mode: m, Profile: "core", DataDir: dataDir, Prompt: "SCRIPT:expand Link the payments service to the bank gateway.",
		Scripts: ExpansionScripts(ids), Latency: latency})
	if err != nil {
		return false, "", o, err
	}
	ok, why := JudgeExpansion(o.Requests, 0)
	return ok, why, o, nil
}

// CoreTools are the tools every profile lists, by contract name.
func CoreTools(reqs []Request) []string {
	r, ok := at(reqs, 0)
	if !ok {
		return nil
	}
	t := Inspect(r.Body).Tools
	slices.Sort(t)
	return t
}

// Describe is a one-line account of a run's scripted requests.
func Describe(reqs []Request) string {
	var parts []string
	for _, r := range reqs {
		if r.Main {
			s := fmt.Sprintf("#%d %s", r.Step, r.Reply)
			if r.Reply != "text" && !r.Offered {
				s += " (not offered)"
			}
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}
