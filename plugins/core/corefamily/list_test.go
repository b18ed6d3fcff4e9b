package corefamily

import (
	"slices"
	"strings"
	"testing"
)

type listJSON struct {
	Count    int      `json:"count"`
	Memories []memory `json:"memories"`
}

func TestList(t *testing.T) {
	h := newHarness(t)
	low := h.store("Low", "c", `{"priority":2,"namespace":"a"}`)
	high := h.store("High", "c", `{"priority":9,"namespace":"a","tier":"long"}`)
	h.AgentID = "bob"
	other := h.store("Other", "c", `{"priority":5,"namespace":"b/c","tags":["x"]}`)

	tests := []struct {
		args string
		want []string
	}{
		{`{"format":"json"}`, []string{high, other, low}},
		{`{"format":"json","namespace":"a"}`, []string{high, low}},
		{`{"format":"json","namespace":"b"}`, nil}, // exact, not a prefix
		{`{"format":"json","tier":"long"}`, []string{high}},
		{`{"format":"json","agent_id":"bob"}`, []string{other}},
		{`{"format":"json","limit":2}`, []string{high, other}},
		{`{"format":"json","limit":0}`, nil},
		// Not advertised (the console's filters): order, tags, since, until.
		{`{"format":"json","order":"recent"}`, []string{other, high, low}},
		{`{"format":"json","order":"recent","limit":1}`, []string{other}},
		{`{"format":"json","tags":"x"}`, []string{other}},
		{`{"format":"json","since":"2000-01-01T00:00:00Z"}`, []string{high, other, low}},
		{`{"format":"json","until":"2000-01-01T00:00:00Z"}`, nil},
	}
	for _, tc := range tests {
		var res listJSON
		h.OK("memory_list", tc.args, &res)
		if got := ids(res.Memories); res.Count != len(tc.want) || !slices.Equal(got, tc.want) {
			t.Errorf("list %s = %d %v, want %v", tc.args, res.Count, got, tc.want)
		}
	}

	// Listing touches nothing.
	if m := h.get(high); m.AccessCount != 0 || m.LastAccessedAt != "" {
		t.Errorf("list touched a memory: %+v", m)
	}

	// The default format is toon_compact: no score, and nothing the call
	// said (namespace b/c, the caller bob) or a default (tier, priority).
	toon := h.OK("memory_list", `{"namespace":"b/c"}`, nil)
	want := "count:1\nmemories[id|title|tags|content]:\n" + other[:8] + "|Other|x|c"
	if toon != want {
		t.Errorf("toon_compact =\n%s\nwant\n%s", toon, want)
	}
	if recent := h.OK("memory_list", `{"namespace":"b/c","order":"recent"}`, nil); recent != want {
		t.Errorf("toon_compact by recency =\n%s\nwant\n%s", recent, want)
	}
	full := h.OK("memory_list", `{"namespace":"b/c","format":"toon"}`, nil)
	if lines := strings.Split(full, "\n"); len(lines) != 3 ||
		lines[1] != "memories[id|title|tier|namespace|priority|confidence|access_count|tags|source|created_at|updated_at|metadata|content]:" ||
		!strings.HasSuffix(lines[2], `|{"agent_id":"bob"}|c`) {
		t.Errorf("toon =\n%s", full)
	}

	h.Fails("memory_list", `{"limit":201}`, "limit: must be an integer from 0 to 200 (got 201)")
	h.Fails("memory_list", `{"tier":"archived"}`, `tier: must be one of short, mid, long (got "archived")`)
	h.Fails("memory_list", `{"format":"csv"}`, `format: must be one of toon_compact, toon, json (got "csv")`)
	h.Fails("memory_list", `{"order":"oldest"}`, `order: must be one of priority, recent (got "oldest")`)
	h.Fails("memory_list", `{"since":"2030-01-01T00:00:00Z","until":"2020-01-01T00:00:00Z"}`, "since: must not be after until")
	h.Fails("memory_list", `{"tags":["x"]}`, "tags: must be a string")
}
