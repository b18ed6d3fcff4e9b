package corefamily

import (
	"slices"
	"strings"
	"testing"
)

type searchJSON struct {
	Count   int      `json:"count"`
	Results []memory `json:"results"`
}

func TestSearch(t *testing.T) {
	h := newHarness(t)
	both := h.store("Postgres replication", "streaming replicas lag", `{"namespace":"db","tags":["ha"]}`)
	one := h.store("Postgres backup", "nightly dumps", `{"namespace":"db","tier":"short"}`)
	h.AgentID = "bob"
	h.store("Redis replication", "replicas", `{"namespace":"cache"}`)

	tests := []struct {
		args string
		want []string
	}{
		{`{"query":"postgres replication","format":"json"}`, []string{both}}, // every word
		{`{"query":"postgres","format":"json","tier":"short"}`, []string{one}},
		{`{"query":"replication","format":"json","namespace":"db"}`, []string{both}},
		{`{"query":"replication","format":"json","agent_id":"ai:test"}`, []string{both}},
		{`{"query":"postgres","format":"json","limit":0}`, nil},
		{`{"query":"mongodb","format":"json"}`, nil},
		// Not advertised (the console's filters): tags, since, until.
		{`{"query":"postgres","format":"json","tags":"ha"}`, []string{both}},
		{`{"query":"postgres","format":"json","since":"2000-01-01T00:00:00Z"}`, []string{both, one}},
		{`{"query":"postgres","format":"json","until":"2000-01-01T00:00:00Z"}`, nil},
	}
	for _, tc := range tests {
		var res searchJSON
		h.OK("memory_search", tc.args, &res)
		got := ids(res.Results)
		slices.Sort(got)
		slices.Sort(tc.want)
		if res.Count != len(tc.want) || !slices.Equal(got, tc.want) {
			t.Errorf("search %s = %d %v, want %v", tc.args, res.Count, got, tc.want)
		}
		for _, m := range res.Results {
			if m.Score != nil {
				t.Errorf("search result carries a score: %+v", m)
			}
		}
	}

	// Search touches nothing; its TOON rows are headed "memories", no score.
	toon := h.OK("memory_search", `{"query":"backup"}`, nil)
	if want := "count:1\nmemories[id|title|tier|namespace|agent_id|content]:\n" + one[:8] + "|Postgres backup|short|db|ai:test|nightly dumps"; toon != want {
		t.Errorf("toon =\n%s\nwant\n%s", toon, want)
	}
	if m := h.get(one); m.AccessCount != 0 {
		t.Errorf("search touched a memory: %+v", m)
	}

	h.Fails("memory_search", `{"query":"x","limit":201}`, "limit: must be an integer from 0 to 200 (got 201)")
	h.Fails("memory_search", `{"query":"x","as_agent":"a//b"}`, "as_agent: must not contain an empty segment")
	h.Fails("memory_search", `{"query":"x","agent_id":"no spaces allowed"}`, "agent_id: may contain only")
}

// TestSearchScopes: with as_agent, a private memory is seen only from its
// own namespace, a team one from the team's namespaces, a collective one
// from anywhere (data-model §5.1).
func TestSearchScopes(t *testing.T) {
	h := newHarness(t)
	private := h.store("Secret plan", "x", `{"namespace":"org/team/alice","scope":"private"}`)
	team := h.store("Team plan", "x", `{"namespace":"org/team/alice","scope":"team"}`)
	collective := h.store("Shared plan", "x", `{"namespace":"elsewhere","scope":"collective"}`)

	tests := []struct {
		asAgent string
		want    []string
	}{
		{"org/team/alice", []string{private, team, collective}},
		{"org/team/bob", []string{team, collective}},
		{"other/place", []string{collective}},
	}
	for _, tc := range tests {
		var res searchJSON
		h.OK("memory_search", `{"query":"plan","format":"json","as_agent":"`+tc.asAgent+`"}`, &res)
		got := ids(res.Results)
		slices.Sort(got)
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Errorf("as_agent %s: %v, want %v", tc.asAgent, got, tc.want)
		}
	}
	if toon := h.OK("memory_search", `{"query":"plan","as_agent":"other/place","format":"toon_compact"}`, nil); !strings.HasPrefix(toon, "count:1\n") {
		t.Errorf("toon = %s", toon)
	}
}
