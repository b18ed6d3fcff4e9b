package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
)

type result struct {
	Open []task `json:"open"`
}

func TestTodoAndDone(t *testing.T) {
	eng := sdktest.StartEngine(t) // a real engine process on a fresh data dir
	notes := sdktest.NewFamily(t, "ai-memory-notes", Families(eng.SDK())).WithEngine(eng)
	notes.Tools("notes") // every tool is described well enough for clients

	m, err := eng.SDK().Store(context.Background(), sdk.Memory{Title: "Deploy", Content: "runs on Fridays", Tier: "long"})
	if err != nil {
		t.Fatal(err)
	}
	var r result
	notes.OK("memory_note_todo", `{"text":"move deploy to Monday","memory_id":"`+m.ID+`"}`, &r)
	notes.OK("memory_note_todo", `{"text":"write the runbook"}`, &r)
	if len(r.Open) != 2 {
		t.Fatalf("open = %v, want 2 tasks", r.Open)
	}
	first := r.Open[0]
	if first.Text != "move deploy to Monday" {
		first = r.Open[1]
	}
	if first.Memory != m.ID {
		t.Errorf("task %v is not linked to memory %s", first, m.ID)
	}
	notes.OK("memory_note_done", `{"id":"`+first.ID+`"}`, &r)
	if len(r.Open) != 1 || r.Open[0].Text != "write the runbook" {
		t.Errorf("after done: open = %v", r.Open)
	}

	notes.Fails("memory_note_done", `{}`, "id")
	notes.Fails("memory_note_done", `{"id":"`+m.ID+`"}`, "no task") // a memory, not a task
	notes.Fails("memory_note_todo", `{"text":7}`, "text")

	// The tasks live in the family's keyspace: another family cannot see them.
	other := sdktest.NewFamily(t, "other", []sdk.Family{{Name: "other", Tools: []sdk.Tool{{
		Name: "peek", Description: "List the notes keyspace.", Schema: sdk.Schema(`{"type":"object","properties":{}}`),
		Handler: func(ctx context.Context, _ sdk.Call) (any, error) {
			l, err := eng.SDK().List(ctx, sdk.Filter{Namespace: sdk.Keyspace("notes"), Limit: 10})
			return len(l), err
		}}}}}).WithEngine(eng)
	if got := other.OK("peek", `{}`, nil); strings.TrimSpace(got) != "0" {
		t.Errorf("another family sees %s tasks", got)
	}
}

// The whole product around the family: built, pinned with plugin add, and
// called through a real host under --profile core,notes.
func TestThroughTheHost(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ai-memory-notes")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	host := sdktest.StartHost(t, bin, "core,notes")
	if tools := host.Tools(); !slices.Contains(tools, "memory_note_todo") || !slices.Contains(tools, "memory_store") {
		t.Fatalf("tools/list = %v", tools)
	}
	if text, isErr := host.Call("memory_note_todo", map[string]any{"text": "ship it"}); isErr || !strings.Contains(text, `"text":"ship it"`) {
		t.Fatalf("memory_note_todo = %v %s", isErr, text)
	}
}
