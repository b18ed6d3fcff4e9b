package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// buildNotes builds the example family as a third party builds it: in its
// own module (examples/notes/go.mod), outside the repository's workspace.
func buildNotes(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ai-memory-notes")
	cmd := commandWithin(t, toolDeadline, "go", "build", "-o", out, ".")
	// In the workspace: go.work maps the SDK's release version to ./sdk
	// (TestGoInstallFromTheTaggedTree builds it as a user would, without).
	cmd.Dir = filepath.Join(repoRoot(), "examples", "notes")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build examples/notes: %v\n%s", err, b)
	}
	return out
}

// openTasks decodes the open list a notes tool answers with.
func openTasks(t *testing.T, res map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	raw, _ := json.Marshal(res["open"])
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("open = %v", res)
	}
	return out
}

func TestThirdPartyFamilyFromPluginAddToCalls(t *testing.T) {
	notes := buildNotes(t)
	e := newEnv(t)

	began := time.Now()
	out, code := e.cli("plugin", "add", notes)
	if code != 0 {
		t.Fatalf("plugin add: exit %d\n%s", code, out)
	}
	for _, want := range []string{"ai-memory-notes 0.1.0 (plugin protocol 1.", "family notes", "2 tools", "memory_note_todo", "memory_note_done", "tokens", "pinned in " + e.config, "--profile core,notes"} {
		if !strings.Contains(out, want) {
			t.Errorf("plugin add output lacks %q:\n%s", want, out)
		}
	}
	h := e.startHost([]string{"--profile", "core,notes"})
	mem := h.ok("memory_store", map[string]any{"format": "json", "title": "Deploy", "content": "runs on Fridays"})
	res := h.ok("memory_note_todo", map[string]any{"text": "move deploy to Monday", "memory_id": mem["id"]})
	t.Logf("plugin add to the first notes call: %v", time.Since(began).Round(time.Millisecond))
	tasks := openTasks(t, res)
	if len(tasks) != 1 || tasks[0]["memory"] != mem["id"] || tasks[0]["text"] != "move deploy to Monday" {
		t.Fatalf("open tasks = %v", tasks)
	}
	if got := sorted(h.toolNames()); !slices.Equal(got, sorted(append(slices.Clone(coreSurface), "memory_note_done", "memory_note_todo"))) {
		t.Errorf("tools/list under core,notes = %v", got)
	}
	h.fails("memory_note_done", map[string]any{}, "id")
	// Through the bridge: the same tool, the same state.
	res = h.ok("memory_capabilities", map[string]any{"tool": "memory_note_done", "arguments": map[string]any{"id": tasks[0]["id"]}})
	if left := openTasks(t, res); len(left) != 0 {
		t.Fatalf("after done through the bridge: %v", left)
	}
	// The family is a family like any other: in the overview, and in doctor --tokens.
	doc := h.ok("memory_capabilities", map[string]any{})
	raw, _ := json.Marshal(doc["families"])
	if !strings.Contains(string(raw), `"name":"notes"`) {
		t.Errorf("memory_capabilities families lack notes: %s", raw)
	}
	r := e.tokens("--profile", "core,notes", "--raw-table")
	var row *struct {
		Name      string `json:"name"`
		ToolCount int    `json:"tool_count"`
		Tokens    int    `json:"tokens"`
		Loaded    bool   `json:"loaded"`
	}
	for i := range r.Families {
		if r.Families[i].Name == "notes" {
			row = &r.Families[i]
		}
	}
	if row == nil || row.ToolCount != 2 || row.Tokens == 0 || !row.Loaded {
		t.Fatalf("doctor --tokens families = %+v", r.Families)
	}
	t.Logf("doctor --tokens: family notes, %d tools, %d tokens", row.ToolCount, row.Tokens)
	for _, tool := range r.Tools {
		if tool.Family == "notes" {
			t.Logf("doctor --tokens: %s %d tokens", tool.Name, tool.Tokens)
		}
	}

	// Mid-session, on a core host: expanded with include_schema, then called.
	c := e.startHost(nil)
	c.fails("memory_note_todo", map[string]any{"text": "x"}, "memory_capabilities")
	res = c.ok("memory_capabilities", map[string]any{"family": "notes", "include_schema": true})
	if defs, _ := res["tools"].([]any); len(defs) != 2 {
		t.Fatalf("include_schema for notes = %v", res)
	}
	eventually(t, 5*time.Second, "tools/list_changed", func() bool { return c.sawNotification("notifications/tools/list_changed") })
	if tasks := openTasks(t, c.ok("memory_note_todo", map[string]any{"text": "write the runbook"})); len(tasks) != 1 {
		t.Fatalf("after expansion: %v", tasks)
	}

	// The allowlist and the audit log name it like a first-party family.
	sum, err := sha256File(notes)
	if err != nil {
		t.Fatal(err)
	}
	e.pins = map[string]string{notes: sum} // writeConfig rewrites what plugin add wrote, with the allowlist
	e.writeConfig("[mcp.allowlist]\n\"ai:e2e-harness\" = [\"core\", \"notes\"]\n\"mallory\" = [\"core\"]\n")
	m := e.startHost(nil, "AI_MEMORY_AGENT_ID=mallory")
	m.fails("memory_capabilities", map[string]any{"tool": "memory_note_todo", "arguments": map[string]any{"text": "z"}}, "not cleared for the notes family")
	audit, code := e.cli("audit", "list", "--json")
	if code != 0 {
		t.Fatalf("audit list: %d %s", code, audit)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(audit), &rows); err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, r := range rows {
		if r["family"] == "notes" {
			events = append(events, r["agent_id"].(string)+" "+r["event_type"].(string)+" "+boolWord(r["granted"]))
		}
	}
	slices.Sort(events)
	if want := []string{"ai:e2e-harness capability_expansion granted", "mallory call_denied denied"}; !slices.Equal(events, want) {
		t.Errorf("audit rows for notes = %v, want %v", events, want)
	}

	// A changed binary is refused at launch, saying how to re-pin it.
	if list, code := e.cli("plugin", "list"); code != 0 || logLine(list, "ai-memory-notes", "pinned", "ok", "notes") == "" {
		t.Errorf("plugin list: %d\n%s", code, list)
	}
	bin, err := os.ReadFile(notes)
	if err != nil {
		t.Fatal(err)
	}
	// Replaced, not written in place: the pinned binary is still running.
	if err := os.WriteFile(notes+".new", append(bin, "tampered"...), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(notes+".new", notes); err != nil {
		t.Fatal(err)
	}
	x := e.startHost([]string{"--profile", "core,notes"})
	text, isErr := x.call("memory_note_todo", map[string]any{"text": "y"})
	if !isErr || !strings.Contains(text+x.stderr.String(), "re-pin it: ai-memory plugin add "+notes) {
		t.Errorf("changed binary: %v %q\nstderr:\n%s", isErr, text, x.stderr.String())
	}
	x.ok("memory_store", map[string]any{"format": "json", "title": "still served", "content": "core works"})
	if list, _ := e.cli("plugin", "list"); logLine(list, "ai-memory-notes", "changed: re-pin with ai-memory plugin add") == "" {
		t.Errorf("plugin list does not show the change:\n%s", list)
	}
	if out, code := e.cli("plugin", "remove", notes); code != 0 || !strings.Contains(out, "removed the pin") {
		t.Fatalf("plugin remove: %d %s", code, out)
	}
	if out, code := e.cli("plugin", "remove", notes); code == 0 || !strings.Contains(out, "no pin for") {
		t.Errorf("second plugin remove: %d %s", code, out)
	}
}

func TestPluginAddRefusesTakenNamesAndPinsNothing(t *testing.T) {
	e := newEnv(t)
	for _, v := range []struct{ variant, want string }{
		{"taken-tool", "memory_store"},
		{"taken-family", `family "graph"`},
		{"next-major", "built for plugin protocol 2; this host speaks protocol 1"},
	} {
		path, _ := pluginVariant(t, v.variant)
		out, code := e.cli("plugin", "add", path)
		if code == 0 || !strings.Contains(out, "nothing pinned") || !strings.Contains(out, v.want) {
			t.Errorf("plugin add %s: exit %d, %q; want a refusal naming %q", v.variant, code, out, v.want)
		}
	}
	cfg, _ := os.ReadFile(e.config)
	if strings.Contains(string(cfg), "testplugin-") {
		t.Errorf("a refused plugin was pinned:\n%s", cfg)
	}
}

func TestProtocolMajorRefusedMinorServed(t *testing.T) {
	e := newEnv(t)
	e.pin("next-major", "next-minor")
	h := e.startHost([]string{"--profile", "full"})
	if logLine(h.stderr.String(), "testplugin-next-major was built for plugin protocol 2; this host speaks protocol 1", "rebuild it") == "" {
		t.Errorf("no clear refusal of the next major:\n%s", h.stderr.String())
	}
	names := h.toolNames()
	if slices.Contains(names, "future_echo") || !slices.Contains(names, "later_echo") {
		t.Fatalf("tools/list under full = %v", names)
	}
	if out := h.ok("later_echo", map[string]any{"say": "x"}); out["tool"] != "later_echo" {
		t.Fatalf("later_echo = %v", out)
	}
	h.ok("memory_store", map[string]any{"format": "json", "title": "t", "content": "the host works"})
}

// A plugin built against an SDK without CallStream (its Describe does not
// offer it, and the method is unimplemented) is called with unary Call.
func TestPluginWithoutCallStreamIsCalledUnary(t *testing.T) {
	e := newEnv(t)
	e.pin("unary-only")
	h := e.startHost([]string{"--profile", "full"})
	for range 3 {
		if out := h.ok("older_echo", map[string]any{"say": "x"}); out["tool"] != "older_echo" {
			t.Fatalf("older_echo = %v", out)
		}
	}
}
