package powerfamily

import (
	"slices"
	"strings"
	"testing"
)

func TestCheckDuplicate(t *testing.T) {
	h := newHarness(t)
	orig := h.memory("Deploy freeze", "Never deploy the billing service on a Friday afternoon, the on-call team is thin and rollbacks take hours.")
	h.memory("Billing rollbacks", "Rollbacks of the billing service need the database migration reverted first.")
	h.memory("Lunch", "Team lunch is on Thursdays at noon.")

	var got duplicateResult
	h.OK("memory_check_duplicate", jsonArgs("title", "Deploy freeze", "content",
		"Never deploy the billing service on a Friday afternoon: the on-call team is thin and rollbacks take hours!"), &got)
	if !got.IsDuplicate || got.Method != "shingle_jaccard" || got.Nearest == nil || got.Nearest.ID != orig || got.SuggestedMerge != orig || got.Threshold != 0.6 {
		t.Fatalf("near-verbatim copy: %+v", got)
	}
	if got.CandidatesScanned < 2 {
		t.Errorf("candidates_scanned = %d, want the billing memories", got.CandidatesScanned)
	}

	got = duplicateResult{}
	h.OK("memory_check_duplicate", jsonArgs("title", "Billing deploys", "content", "Deploys of billing are risky on Fridays."), &got)
	if got.IsDuplicate || got.Nearest == nil || got.SuggestedMerge != "" {
		t.Fatalf("a paraphrase is not a near-duplicate by shingles: %+v", got)
	}

	got = duplicateResult{}
	h.OK("memory_check_duplicate", jsonArgs("title", "Deploy freeze", "content", "Never deploy the billing service on a Friday afternoon, the on-call team is thin and rollbacks take hours.", "namespace", "other"), &got)
	if got.IsDuplicate || got.Nearest != nil || got.CandidatesScanned != 0 {
		t.Fatalf("namespace is exact: %+v", got)
	}

	h.Fails("memory_check_duplicate", jsonArgs("content", "x"), "title")
	h.Fails("memory_check_duplicate", jsonArgs("title", "x"), "content")
	h.Fails("memory_check_duplicate", jsonArgs("title", "x", "content", "y", "threshold", 1.5), "threshold: must be between 0 and 1")
	h.Fails("memory_check_duplicate", jsonArgs("title", "x", "content", "y", "threshold", "high"), "threshold")
	h.Fails("memory_check_duplicate", jsonArgs("title", "x", "content", "y", "extra", 1), "extra")
	h.Fails("memory_check_duplicate", jsonArgs("title", "", "content", "y"), "title")
}

func TestAutoTag(t *testing.T) {
	h := newHarness(t)
	h.memory("Kafka consumer lag", "Consumer lag on the orders topic spikes after deploys.", "kafka", "ops")
	h.memory("Kafka retention", "Retention on the orders topic is seven days.", "kafka")
	h.memory("Orders topic partitions", "The orders topic has twelve partitions.", "kafka", "ops")
	id := h.memory("Rebalancing storms", "Consumer rebalancing on the orders topic stalls every partition for seconds.", "incident")

	var got autoTagResult
	h.OK("memory_auto_tag", jsonArgs("id", id), &got)
	if got.Method != "tfidf" || got.ID != id || len(got.NewTags) == 0 || len(got.NewTags) > maxNewTags {
		t.Fatalf("auto_tag = %+v", got)
	}
	if got.NewTags[0] != "kafka" {
		t.Errorf("new_tags = %v, want the neighbours' tag kafka first", got.NewTags)
	}
	if got.AllTags[0] != "incident" || len(got.AllTags) != 1+len(got.NewTags) {
		t.Errorf("all_tags = %v: the memory's own tag stays first", got.AllTags)
	}
	for _, tag := range got.NewTags {
		if tag == "the" || tag == "incident" {
			t.Errorf("new tag %q", tag)
		}
	}
	// Tagging again adds nothing it already has.
	var again autoTagResult
	h.OK("memory_auto_tag", jsonArgs("id", id[:8]), &again)
	for _, tag := range again.NewTags {
		if slices.Contains(got.AllTags, tag) {
			t.Errorf("re-added %q", tag)
		}
	}
	h.Fails("memory_auto_tag", `{}`, "id")
	h.Fails("memory_auto_tag", jsonArgs("id", "ghost-memory"), "id: memory not found: ghost-memory")
}

func TestExpandQuery(t *testing.T) {
	h := newHarness(t)
	h.memory("Postgres pool", "The postgres connection pool runs through pgbouncer.")
	h.memory("Pool sizing", "Size the postgres pool to the pgbouncer limits.")
	h.memory("Replica lag", "Postgres replica lag alerts page the on-call.")
	h.memory("Lunch", "Lunch is at noon.")
	for i := range 6 {
		h.memory("Filler "+string(rune('a'+i)), "Frontend build notes.")
	}
	var got expandResult
	h.OK("memory_expand_query", jsonArgs("query", "how is postgres set up?"), &got)
	if got.Method != "pmi" || got.Matched != 3 || len(got.ExpandedTerms) == 0 || got.ExpandedTerms[0] != "pgbouncer" {
		t.Fatalf("expand = %+v", got)
	}
	for _, w := range got.ExpandedTerms {
		if w == "postgres" || w == "the" {
			t.Errorf("expanded_terms holds %q", w)
		}
	}
	var none expandResult
	raw := h.OK("memory_expand_query", jsonArgs("query", "zebra"), &none)
	if len(none.ExpandedTerms) != 0 || none.Matched != 0 || !strings.Contains(raw, `"expanded_terms":[]`) {
		t.Fatalf("no match = %s", raw)
	}
	h.Fails("memory_expand_query", `{}`, "query")
	h.Fails("memory_expand_query", jsonArgs("query", "  "), "query: must not be empty")
	h.Fails("memory_expand_query", jsonArgs("query", "x", "limit", 0), "limit: must be an integer from 1 to 50")
	h.Fails("memory_expand_query", jsonArgs("query", strings.Repeat("a ", 3000)), "query: must be at most 4096 characters (got 6000)")
}

func TestDetectContradiction(t *testing.T) {
	h := newHarness(t)
	port1 := h.memory("API port", "The payments API listens on port 8080 in staging.")
	port2 := h.memory("API port (new)", "The payments API listens on port 9090 in staging.")
	neg1 := h.memory("Cache", "The session cache is shared between regions.")
	neg2 := h.memory("Cache (2)", "The session cache is not shared between regions.")
	opp := h.memory("Cache flag", "Caching of sessions is disabled in production builds.")
	opp2 := h.memory("Cache flag 2", "Caching of sessions is enabled in production builds.")
	other := h.memory("Lunch", "Team lunch is on Thursdays at noon.")
	ver1 := h.memory("Go version", "The build uses Go 1.22 on CI.")
	ver2 := h.memory("Go version 2", "The build uses Go 1.23 on CI.")

	for _, c := range []struct {
		a, b, verdict, signal string
	}{
		{port1, port2, "likely", "port: 8080 vs 9090"},
		{ver1, ver2, "likely", "1.22 vs 1.23"},
		{neg1, neg2, "likely", "negation:"},
		{opp, opp2, "likely", "opposites disabled/enabled"},
		{port1, other, "unknown", ""},
		{port1, port1, "unknown", ""},
		{neg1, port1, "unknown", ""},
	} {
		var got contradictionResult
		raw := h.OK("memory_detect_contradiction", jsonArgs("id_a", c.a, "id_b", c.b), &got)
		if got.Method != "heuristic" || got.Verdict != c.verdict || got.MemoryA.ID != c.a || got.MemoryB.ID != c.b {
			t.Errorf("%s", raw)
			continue
		}
		if c.signal != "" && !strings.Contains(strings.Join(got.Signals, "\n"), c.signal) {
			t.Errorf("signals %v, want %q", got.Signals, c.signal)
		}
		if c.verdict == "unknown" && len(got.Signals) > 0 {
			t.Errorf("unknown with signals: %s", raw)
		}
	}
	h.Fails("memory_detect_contradiction", jsonArgs("id_a", port1), "id_b")
	h.Fails("memory_detect_contradiction", jsonArgs("id_b", port1), "id_a")
	h.Fails("memory_detect_contradiction", jsonArgs("id_a", "ghost-memory", "id_b", port1), "id_a: memory not found: ghost-memory")
	h.Fails("memory_detect_contradiction", jsonArgs("id_a", port1, "id_b", "ghost-memory"), "id_b: memory not found: ghost-memory")
	h.Fails("memory_detect_contradiction", jsonArgs("id_a", port1, "id_b", 7), "id_b")
}
