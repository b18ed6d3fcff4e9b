package e2e

import (
	"slices"
	"strings"
	"testing"
)

var powerTools = []string{"memory_auto_tag", "memory_check_duplicate", "memory_consolidate", "memory_detect_contradiction", "memory_expand_query", "memory_inbox"}

// powerHost starts a host under --profile power over stdio with no model
// endpoint configured.
func powerHost(t *testing.T) *host {
	t.Helper()
	h := newEnv(t).startHost([]string{"--profile", "power"})
	if got, want := sorted(h.toolNames()), sorted(append(slices.Clone(coreSurface), powerTools...)); !slices.Equal(got, want) {
		t.Fatalf("tools/list under power = %v, want %v", got, want)
	}
	return h
}

func (h *host) store(title, content string, tags ...string) string {
	h.t.Helper()
	args := map[string]any{"title": title, "content": content, "format": "json"}
	if len(tags) > 0 {
		args["tags"] = tags
	}
	return h.ok("memory_store", args)["id"].(string)
}

func TestPowerCheckDuplicateWithNoModel(t *testing.T) {
	h := powerHost(t)
	id := h.store("Deploy freeze", "Never deploy the billing service on a Friday afternoon; the on-call team is thin and rollbacks take hours.")
	h.store("Billing rollbacks", "Rollbacks of the billing service need the migration reverted first.")
	got := h.ok("memory_check_duplicate", map[string]any{"title": "Deploy freeze",
		"content": "Never deploy the billing service on a Friday afternoon. The on-call team is thin, and rollbacks take hours."})
	nearest, _ := got["nearest"].(map[string]any)
	if got["method"] != "shingle_jaccard" || got["is_duplicate"] != true || got["suggested_merge"] != id || nearest["id"] != id || got["threshold"] != 0.6 {
		t.Fatalf("check_duplicate = %v", got)
	}
	got = h.ok("memory_check_duplicate", map[string]any{"title": "Deploy freeze", "content": "Friday deploys of billing are risky.", "threshold": 0.9})
	if got["is_duplicate"] != false || got["suggested_merge"] != nil || got["threshold"] != 0.9 {
		t.Fatalf("paraphrase = %v", got)
	}
	h.fails("memory_check_duplicate", map[string]any{"content": "x"}, "title")
	h.fails("memory_check_duplicate", map[string]any{"title": "x"}, "content")
	h.fails("memory_check_duplicate", map[string]any{"title": "x", "content": "y", "threshold": -0.1}, "threshold: must be between 0 and 1")
	h.fails("memory_check_duplicate", map[string]any{"title": "x", "content": "y", "namespace": "bad//ns"}, "namespace")
	h.fails("memory_check_duplicate", map[string]any{"title": "x", "content": "y", "model": "z"}, "model")
	// Read-only: nothing was stored.
	if n := len(rows(h.ok("memory_list", map[string]any{"format": "json"})["memories"])); n != 2 {
		t.Errorf("memories after checks = %d, want 2", n)
	}
}

func TestPowerAutoTagWithNoModel(t *testing.T) {
	h := powerHost(t)
	h.store("Kafka consumer lag", "Consumer lag on the orders topic spikes after deploys.", "kafka", "ops")
	h.store("Kafka retention", "Retention on the orders topic is seven days.", "kafka")
	id := h.store("Rebalancing storms", "Consumer rebalancing on the orders topic stalls every partition.", "incident")
	got := h.ok("memory_auto_tag", map[string]any{"id": id})
	tags, _ := got["all_tags"].([]any)
	added, _ := got["new_tags"].([]any)
	if got["method"] != "tfidf" || got["id"] != id || len(added) == 0 || added[0] != "kafka" || tags[0] != "incident" || len(tags) != 1+len(added) {
		t.Fatalf("auto_tag = %v", got)
	}
	mem := h.ok("memory_get", map[string]any{"id": id, "format": "json"})
	if !strings.Contains(strings.Join(anyStrings(mem["tags"]), ","), "kafka") {
		t.Fatalf("tags not written: %v", mem)
	}
	h.fails("memory_auto_tag", map[string]any{}, "id")
	h.fails("memory_auto_tag", map[string]any{"id": "nope-nope"}, "id: memory not found: nope-nope")
	h.fails("memory_auto_tag", map[string]any{"id": 5}, "id")
}

func TestPowerExpandQueryWithNoModel(t *testing.T) {
	h := powerHost(t)
	h.store("Postgres pool", "The postgres connection pool runs through pgbouncer.")
	h.store("Pool sizing", "Size the postgres pool to the pgbouncer limits.")
	h.store("Replica lag", "Postgres replica lag alerts page the on-call.")
	for _, w := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		h.store("Frontend "+w, "Frontend build notes for "+w+".")
	}
	got := h.ok("memory_expand_query", map[string]any{"query": "how do we run postgres"})
	terms := anyStrings(got["expanded_terms"])
	if got["method"] != "pmi" || got["matched"] != float64(3) || len(terms) == 0 || terms[0] != "pgbouncer" || slices.Contains(terms, "postgres") {
		t.Fatalf("expand_query = %v", got)
	}
	h.fails("memory_expand_query", map[string]any{}, "query")
	h.fails("memory_expand_query", map[string]any{"query": ""}, "query: must not be empty")
	h.fails("memory_expand_query", map[string]any{"query": "x", "limit": 51}, "limit: must be an integer from 1 to 50")
	h.fails("memory_expand_query", map[string]any{"query": "x", "limit": 2.5}, "limit: must be an integer")
}

func TestPowerDetectContradictionWithNoModel(t *testing.T) {
	h := powerHost(t)
	a := h.store("API port", "The payments API listens on port 8080 in staging.")
	b := h.store("API port (new)", "The payments API listens on port 9090 in staging.")
	c := h.store("Lunch", "Team lunch is on Thursdays at noon.")
	got := h.ok("memory_detect_contradiction", map[string]any{"id_a": a, "id_b": b})
	if got["method"] != "heuristic" || got["verdict"] != "likely" || !strings.Contains(strings.Join(anyStrings(got["signals"]), "\n"), "port: 8080 vs 9090") {
		t.Fatalf("contradiction = %v", got)
	}
	got = h.ok("memory_detect_contradiction", map[string]any{"id_a": a, "id_b": c})
	if got["verdict"] != "unknown" || got["signals"] != nil {
		t.Fatalf("unrelated = %v", got)
	}
	h.fails("memory_detect_contradiction", map[string]any{"id_a": a}, "id_b")
	h.fails("memory_detect_contradiction", map[string]any{"id_a": "ghost", "id_b": b}, "id_a: memory not found: ghost")
	h.fails("memory_detect_contradiction", map[string]any{"id_a": a, "id_b": ""}, "id_b")
}

func anyStrings(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// The power family's definitions are what every client pays for under
// --profile power: issue 11 allows 450 cl100k tokens for all six tools.
func TestPowerToolsTokenCost(t *testing.T) {
	r := newEnv(t).tokens("--raw-table", "--profile", "power")
	total, n := 0, 0
	for _, tool := range r.Tools {
		if tool.Family == "power" && slices.Contains(powerTools, tool.Name) {
			total += tool.Tokens
			n++
			t.Logf("%s %d", tool.Name, tool.Tokens)
		}
	}
	if n != len(powerTools) || total > 450 {
		t.Fatalf("%d power tools cost %d cl100k tokens; want %d within 450", n, total, len(powerTools))
	}
}
