package e2e

import (
	"fmt"
	"strings"
	"testing"
)

func TestStoreGetListSearchRecallRoundTrip(t *testing.T) {
	h := newEnv(t).startHost(nil)
	stored := h.ok("memory_store", map[string]any{"format": "json",
		"title": "Deploy runbook", "content": "Deployments run through the blue green pipeline on Fridays.",
		"namespace": "ops/deploy", "tags": []string{"deploy", "runbook"}, "priority": 8,
	})
	id, _ := stored["id"].(string)
	if len(id) != 36 || stored["namespace"] != "ops/deploy" || stored["tier"] != "mid" {
		t.Fatalf("store result = %v", stored)
	}
	if stored["agent_id"] != "ai:e2e-harness" {
		t.Errorf("agent_id = %v, want the session identity ai:e2e-harness", stored["agent_id"])
	}
	h.ok("memory_store", map[string]any{"format": "json", "title": "Lunch", "content": "The team eats lunch at noon.", "namespace": "ops"})

	got := h.ok("memory_get", map[string]any{"id": id[:8], "format": "json"})
	if got["id"] != id || got["content"] != "Deployments run through the blue green pipeline on Fridays." || got["priority"] != float64(8) {
		t.Fatalf("get by prefix = %v", got)
	}

	list := h.ok("memory_list", map[string]any{"namespace": "ops/deploy", "format": "json"})
	if list["count"] != float64(1) {
		t.Fatalf("list = %v", list)
	}

	search := h.ok("memory_search", map[string]any{"query": "deployment pipeline", "format": "json"})
	results, _ := search["results"].([]any)
	if len(results) != 1 || results[0].(map[string]any)["id"] != id {
		t.Fatalf("search (stemmed, every term) = %v", search)
	}
	if none := h.ok("memory_search", map[string]any{"query": "deployment lunch", "format": "json"}); none["count"] != float64(0) {
		t.Fatalf("search must require every term: %v", none)
	}

	recall := h.ok("memory_recall", map[string]any{"context": "friday deploys", "format": "json"})
	mems, _ := recall["memories"].([]any)
	if len(mems) == 0 || mems[0].(map[string]any)["id"] != id || mems[0].(map[string]any)["content"] == nil {
		t.Fatalf("recall = %v", recall)
	}
	if after := h.ok("memory_get", map[string]any{"id": id, "format": "json"}); after["access_count"] != float64(1) {
		t.Errorf("recall did not touch: access_count = %v", after["access_count"])
	}

	// The default (toon_compact) list form carries content too.
	text, isErr := h.call("memory_recall", map[string]any{"context": "deploy"})
	if isErr || !strings.Contains(text, "blue green pipeline") {
		t.Errorf("default recall form lacks content: %q", text)
	}

	// By default a store answers its short id alone, the id listings show
	// and every tool takes; get answers a card without ids or times.
	short := h.ok("memory_store", map[string]any{"title": "Pager", "content": "The pager rotates on Mondays.", "namespace": "ops"})
	sid, _ := short["id"].(string)
	if len(short) != 1 || len(sid) < 8 || len(sid) >= 36 {
		t.Fatalf("default store answer = %v, want the short id alone", short)
	}
	if card, _ := h.call("memory_get", map[string]any{"id": sid}); card != "title:Pager\nnamespace:ops\ncontent:\nThe pager rotates on Mondays." {
		t.Errorf("get by the short id =\n%s", card)
	}
	if listed, _ := h.call("memory_list", map[string]any{"namespace": "ops"}); !strings.Contains(listed, "\n"+sid+"|Pager|") {
		t.Errorf("list does not show the short id %s:\n%s", sid, listed)
	}
}

func TestValidationErrorsNameTheField(t *testing.T) {
	h := newEnv(t).startHost(nil)
	long := strings.Repeat("x", 513)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_store", map[string]any{"content": "c"}, "title"},
		{"memory_store", map[string]any{"title": "t"}, "content"},
		{"memory_store", map[string]any{"title": "  ", "content": "c"}, "title"},
		{"memory_store", map[string]any{"title": long, "content": "c"}, "title"},
		{"memory_store", map[string]any{"title": "t", "content": strings.Repeat("y", 65537)}, "content"},
		{"memory_store", map[string]any{"title": "t", "content": "a\r\nb"}, "content"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "tier": "forever"}, "tier"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "priority": 11}, "priority"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "priority": 5.5}, "priority"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "priority": "5"}, "priority"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "priority": 1e30}, "priority"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "confidence": 1.5}, "confidence"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "namespace": "a//b"}, "namespace"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "namespace": "a/../b"}, "namespace"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "tags": []any{"ok", 3}}, "tags"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "source": "martian"}, "source"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "metadata": "x"}, "metadata"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "scope": "galaxy"}, "scope"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "agent_id": "bad id!"}, "agent_id"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "on_conflict": "clobber"}, "on_conflict"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "colour": "red"}, "colour"},
		{"memory_get", map[string]any{}, "id"},
		{"memory_get", map[string]any{"id": "00000000-0000-4000-8000-000000000000"}, "not found"},
		{"memory_list", map[string]any{"limit": 201}, "limit"},
		{"memory_list", map[string]any{"tier": "huge"}, "tier"},
		{"memory_list", map[string]any{"agent_id": "no spaces"}, "agent_id"},
		{"memory_list", map[string]any{"format": "xml"}, "format"},
		{"memory_search", map[string]any{}, "query"},
		{"memory_search", map[string]any{"query": "x", "as_agent": "a//b"}, "as_agent"},
		{"memory_recall", map[string]any{}, "context"},
		{"memory_recall", map[string]any{"context": "x", "limit": 51}, "limit"},
		{"memory_recall", map[string]any{"context": "x", "since": "yesterday"}, "since"},
		{"memory_recall", map[string]any{"context": "x", "budget_tokens": -1}, "budget_tokens"},
	}
	for _, c := range cases {
		h.fails(c.tool, c.args, c.want)
	}
	// Nothing was written by any of them.
	if list := h.ok("memory_list", map[string]any{"format": "json"}); list["count"] != float64(0) {
		t.Fatalf("a rejected call wrote something: %v", list)
	}
}

func TestStoreConflictPolicies(t *testing.T) {
	h := newEnv(t).startHost(nil)
	first := h.ok("memory_store", map[string]any{"format": "json", "title": "Same", "content": "one", "tier": "long"})
	merged := h.ok("memory_store", map[string]any{"format": "json", "title": "Same", "content": "two", "tier": "short"})
	if merged["id"] != first["id"] || merged["duplicate"] != true || merged["tier"] != "long" {
		t.Fatalf("merge = %v (first %v)", merged, first)
	}
	h.fails("memory_store", map[string]any{"title": "Same", "content": "three", "on_conflict": "error"}, fmt.Sprint(first["id"]))
	v := h.ok("memory_store", map[string]any{"format": "json", "title": "Same", "content": "four", "on_conflict": "version"})
	if v["title"] != "Same (2)" {
		t.Fatalf("version = %v", v)
	}
}
