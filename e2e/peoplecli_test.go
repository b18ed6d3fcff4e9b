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
		cmd := exec.Command(filepath.Join(bins, "ai-memory"), args...)
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
