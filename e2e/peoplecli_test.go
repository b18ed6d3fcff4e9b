package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIForPeople: store, list, get, recall and search from the command
// line, as the operator identity, in tables and as JSON.
func TestCLIForPeople(t *testing.T) {
	e := newEnv(t)
	run := func(stdin string, args ...string) (string, error) {
		cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
		cmd.Env = e.environ("AI_MEMORY_CLI_IDENTITY=cli:tester")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, err := run(stdin, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	if out := must("deploys go out on fridays\n", "store", "--title", "Deploy day", "--tag", "ops"); !strings.Contains(out, "as cli:tester") {
		t.Errorf("store: %s", out)
	}
	must("", "store", "--title", "Database", "--content", "postgres 16 on the db box", "--namespace", "infra")

	var list struct {
		Count    int `json:"count"`
		Memories []struct {
			ID, Title, CreatedBy, Source string
			Tags                         []string
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(must("", "list", "--json")), &list); err != nil || list.Count != 2 {
		t.Fatalf("list --json: %v %+v", err, list)
	}
	table := must("", "list")
	for _, want := range []string{"Deploy day", "Database", "infra", "postgres 16 on the db box"} {
		if !strings.Contains(table, want) {
			t.Errorf("list table lacks %q:\n%s", want, table)
		}
	}
	var got map[string]any
	id := list.Memories[1].ID
	if list.Memories[1].Title != "Deploy day" {
		id = list.Memories[0].ID
	}
	if err := json.Unmarshal([]byte(must("", "get", id[:8], "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if got["created_by"] != "cli:tester" || got["content"] != "deploys go out on fridays" || got["source"] != "cli" {
		t.Errorf("get: %v", got)
	}
	if out := must("", "recall", "when", "do", "we", "deploy"); !strings.Contains(out, "Deploy day") || strings.Contains(out, "Database") {
		t.Errorf("recall:\n%s", out)
	}
	if out := must("", "search", "postgres", "--json"); !strings.Contains(out, `"count": 1`) {
		t.Errorf("search --json:\n%s", out)
	}
	if out, err := run("", "get", "ffffffff"); err == nil || !strings.Contains(out, "not found") {
		t.Errorf("get of a missing id: %v\n%s", err, out)
	}
	if out, err := run("", "store", "--title", "x", "--content", "y", "--identity", "bad id"); err == nil || !strings.Contains(out, "--identity") {
		t.Errorf("bad identity: %v\n%s", err, out)
	}
	if out := must("", "completion", "bash", "--code"); !strings.Contains(out, "complete") {
		t.Errorf("completion bash: %s", out)
	}
}

// TestCLIForgetDeleteUpdate: forget and delete write nothing without --yes
// (a dry run when piped, a question on a terminal), archive or delete with
// it, and exit 1 naming the pending action when a namespace policy queues
// them; update edits.
func TestCLIForgetDeleteUpdate(t *testing.T) {
	e := newEnv(t)
	run := func(stdin string, args ...string) (string, error) {
		cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
		cmd.Env = e.environ("AI_MEMORY_CLI_IDENTITY=cli:tester")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := run("", args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	count := func() int {
		t.Helper()
		var l struct{ Count int }
		if err := json.Unmarshal([]byte(must("list", "--json")), &l); err != nil {
			t.Fatal(err)
		}
		return l.Count
	}
	must("store", "--title", "draft one", "--content", "draft notes on caching")
	must("store", "--title", "draft two", "--content", "draft notes on queues")
	keep := must("store", "--title", "keep", "--content", "the final notes", "--json")

	out := must("forget", "draft", "notes")
	for _, want := range []string{"draft one", "draft two", "would archive 2 memories", "dry run: nothing archived; add --yes"} {
		if !strings.Contains(out, want) {
			t.Errorf("forget dry run lacks %q:\n%s", want, out)
		}
	}
	if n := count(); n != 3 {
		t.Fatalf("after a dry run: %d memories, want 3", n)
	}
	if out := must("forget", "draft", "--json"); !strings.Contains(out, `"would_archive": 2`) {
		t.Errorf("forget --json dry run:\n%s", out)
	}
	if out, err := run("", "forget"); err == nil || !strings.Contains(out, "say what to forget") {
		t.Errorf("forget with no filter: %v\n%s", err, out)
	}
	if out := must("forget", "draft", "--yes"); !strings.Contains(out, "archived 2 memories") {
		t.Errorf("forget --yes:\n%s", out)
	}
	if n := count(); n != 1 {
		t.Fatalf("after forget --yes: %d memories, want 1", n)
	}

	var k struct{ ID string }
	json.Unmarshal([]byte(keep), &k)
	if out := must("update", k.ID[:8], "--content", "the final notes, edited", "--tag", "done"); !strings.Contains(out, "updated "+k.ID) {
		t.Errorf("update:\n%s", out)
	}
	if out := must("get", k.ID, "--json"); !strings.Contains(out, "the final notes, edited") || !strings.Contains(out, `"done"`) {
		t.Errorf("get after update:\n%s", out)
	}
	if out := must("delete", k.ID[:8]); !strings.Contains(out, "would delete memory "+k.ID) || !strings.Contains(out, "nothing deleted") {
		t.Errorf("delete dry run:\n%s", out)
	}
	if out := must("delete", k.ID[:8], "--yes", "--archive"); !strings.Contains(out, "deleted memory "+k.ID) || !strings.Contains(out, "ai-memory archive restore "+k.ID+" brings it back") {
		t.Errorf("delete --yes:\n%s", out)
	}
	if out, err := run("", "get", k.ID); err == nil || !strings.Contains(out, "not found") {
		t.Errorf("get after delete: %v\n%s", err, out)
	}

	// A policy that queues deletes queues the CLI's forget too.
	alice := e.startHost([]string{"--profile", "governance,core", "--agent-id", "ai:alice"})
	rules := alice.ok("memory_store", map[string]any{"format": "json", "title": "team rules", "content": "deletes need approval", "namespace": "team"})
	alice.ok("memory_namespace_set_standard", map[string]any{"namespace": "team", "id": rules["id"], "governance": map[string]any{"write": "any", "delete": "approve"}})
	if out, err := run("", "forget", "--namespace", "team", "--yes"); err == nil || !strings.Contains(out, "queued for approval as pending action") {
		t.Errorf("forget under an approval policy: %v\n%s", err, out)
	}
	if l := alice.ok("memory_pending_list", map[string]any{}); l["count"].(float64) != 1 {
		t.Errorf("pending after the queued forget: %v", l)
	}

	// On a terminal the dry run ends in a question; only yes archives.
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: the terminal question is not tested")
	}
	must("store", "--title", "zebra", "--content", "zebra crossing")
	onTTY := func(answer string) string {
		cmd := command(t, script, "-qec", filepath.Join(bins, "ai-memory")+" forget zebra", "/dev/null")
		cmd.Env = e.environ("AI_MEMORY_CLI_IDENTITY=cli:tester")
		cmd.Stdin = strings.NewReader(answer + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("forget on a terminal: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := onTTY("n"); !strings.Contains(out, "Archive 1 memory (ai-memory archive restore ID brings one back)? [y/N]") || !strings.Contains(out, "nothing archived") {
		t.Errorf("forget answered no:\n%s", out)
	}
	// An answer that is neither yes nor no is asked again.
	if out := onTTY("sure\nno"); !strings.Contains(out, "please answer y (yes) or n (no)") || !strings.Contains(out, "nothing archived") {
		t.Errorf("forget answered sure, then no:\n%s", out)
	}
	if n := count(); n != 2 { // team rules and the zebra
		t.Fatalf("after no: %d memories, want 2", n)
	}
	if out := onTTY("y"); !strings.Contains(out, "archived 1 memory") {
		t.Errorf("forget answered yes:\n%s", out)
	}
}
