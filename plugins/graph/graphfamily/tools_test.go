package graphfamily

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/sdk/sdktest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestLinkAndGetLinks(t *testing.T) {
	h := newHarness(t)
	a, b, c := h.memory("a", "n"), h.memory("b", "n/x"), h.memory("c", "n")
	text := h.OK("memory_link", jsonArgs("source_id", a, "target_id", b), nil)
	if !strings.HasPrefix(text, `{"linked":true,"relation":"related_to","valid_from":"`) {
		t.Fatalf("link = %s", text)
	}
	var again linkResult
	h.OK("memory_link", jsonArgs("source_id", a, "target_id", b, "relation", "related_to"), &again)
	if !again.Unchanged || again.Revived {
		t.Fatalf("link again = %+v", again)
	}
	h.OK("memory_link", jsonArgs("source_id", c, "target_id", a, "relation", "contradicts"), nil)
	h.Fails("memory_link", jsonArgs("source_id", a, "target_id", "ghost-memory"), "target_id: memory not found: ghost-memory")
	h.Fails("memory_link", jsonArgs("source_id", "ghost-memory", "target_id", a), "source_id: memory not found: ghost-memory")

	var got struct {
		Count int       `json:"count"`
		Out   []linkRow `json:"out"`
		In    []linkRow `json:"in"`
	}
	raw := h.OK("memory_get_links", jsonArgs("id", a), &got)
	if got.Count != 2 || len(got.Out) != 1 || len(got.In) != 1 ||
		got.Out[0].ID != b || got.Out[0].Title != "b" || got.Out[0].Namespace != "n/x" || got.Out[0].ObservedBy != "ai:test" ||
		got.In[0].ID != c || got.In[0].Relation != "contradicts" {
		t.Fatalf("get_links = %s", raw)
	}
	if strings.Contains(raw, a) || strings.Contains(raw, "null") || strings.Contains(raw, `""`) {
		t.Errorf("get_links repeats the id asked about or carries empty fields: %s", raw)
	}
	if text := h.OK("memory_get_links", jsonArgs("id", b), nil); !strings.Contains(text, `"count":1`) {
		t.Errorf("b's links = %s", text)
	}
	h.Fails("memory_get_links", jsonArgs("id", "ghost-memory"), "id: memory not found: ghost-memory")
}

func TestInvalidate(t *testing.T) {
	h := newHarness(t)
	a, b := h.memory("a", "n"), h.memory("b", "n")
	h.OK("memory_link", jsonArgs("source_id", a, "target_id", b, "relation", "derived_from"), nil)
	var inv invalidateResult
	h.OK("memory_kg_invalidate", jsonArgs("source_id", a, "target_id", b, "relation", "derived_from", "valid_until", "2030-01-01T00:00:00+02:00"), &inv)
	if !inv.Found || inv.ValidUntil != "2029-12-31T22:00:00Z" || inv.PreviousValidUntil != "" {
		t.Fatalf("invalidate = %+v", inv)
	}
	var future struct {
		Out []linkRow `json:"out"`
	}
	h.OK("memory_get_links", jsonArgs("id", a), &future)
	if r := future.Out[0]; r.ValidUntil != "2029-12-31T22:00:00Z" || r.InvalidatedAt == "" || r.InvalidatedBy != "ai:test" {
		t.Fatalf("an end set ahead shows when it was recorded: %+v", r)
	}
	h.OK("memory_kg_invalidate", jsonArgs("source_id", a, "target_id", b, "relation", "derived_from"), &inv)
	if inv.PreviousValidUntil != "2029-12-31T22:00:00Z" || inv.ValidUntil >= inv.PreviousValidUntil {
		t.Fatalf("invalidate now = %+v", inv)
	}
	if text := h.OK("memory_kg_invalidate", jsonArgs("source_id", a, "target_id", b, "relation", "supersedes"), nil); text != `{"found":false}` {
		t.Fatalf("no such link = %s", text)
	}
	h.Fails("memory_kg_invalidate", jsonArgs("source_id", a, "target_id", "ghost-memory", "relation", "supersedes"), "target_id: memory not found")
	var rows struct {
		Out []linkRow `json:"out"`
	}
	h.OK("memory_get_links", jsonArgs("id", a), &rows)
	if len(rows.Out) != 1 || rows.Out[0].ValidUntil == "" || rows.Out[0].InvalidatedBy != "ai:test" || rows.Out[0].InvalidatedAt != "" {
		t.Fatalf("invalidated link = %+v", rows)
	}
	var rev linkResult
	h.OK("memory_link", jsonArgs("source_id", a, "target_id", b, "relation", "derived_from"), &rev)
	if !rev.Revived {
		t.Fatalf("revive = %+v", rev)
	}
}

func TestQueryShapes(t *testing.T) {
	h := newHarness(t)
	a, b, c, d := h.memory("a", "n"), h.memory("b", "n"), h.memory("c", "n"), h.memory("d", "n")
	h.OK("memory_link", jsonArgs("source_id", a, "target_id", b), nil)
	h.OK("memory_link", jsonArgs("source_id", b, "target_id", c, "relation", "supersedes"), nil)
	h.OK("memory_link", jsonArgs("source_id", c, "target_id", a), nil) // a cycle
	h.OK("memory_link", jsonArgs("source_id", d, "target_id", a), nil)

	raw := h.OK("memory_kg_query", jsonArgs("source_id", a, "max_depth", 5), nil)
	var out queryOut
	json.Unmarshal([]byte(raw), &out)
	if out.Count != 2 || out.Nodes[0].ID != b || out.Nodes[0].Depth != 1 || out.Nodes[0].Via != nil ||
		out.Nodes[1].ID != c || out.Nodes[1].Depth != 2 || len(out.Nodes[1].Via) != 1 || out.Nodes[1].Via[0] != b || out.Nodes[1].Relation != "supersedes" {
		t.Fatalf("query out = %s", raw)
	}
	if strings.Contains(raw, `"dir"`) || strings.Contains(raw, "truncated") {
		t.Errorf("direction out needs no dir and nothing was cut: %s", raw)
	}
	h.OK("memory_kg_query", jsonArgs("source_id", a, "direction", "in"), &out)
	if out.Count != 2 || out.Nodes[0].Dir != "" {
		t.Fatalf("query in = %+v", out)
	}
	h.OK("memory_kg_query", jsonArgs("source_id", a, "direction", "both"), &out)
	if out.Count != 3 {
		t.Fatalf("query both = %+v", out)
	}
	for _, n := range out.Nodes {
		if want := map[string]string{b: "out", c: "in", d: "in"}[n.ID]; n.Dir != want {
			t.Errorf("node %s dir %q, want %q", n.Title, n.Dir, want)
		}
	}
	h.OK("memory_kg_query", jsonArgs("source_id", a, "max_depth", 3, "relation", "related_to"), &out)
	if out.Count != 1 || out.Nodes[0].ID != b {
		t.Fatalf("relation filter = %+v", out)
	}
	h.OK("memory_kg_query", jsonArgs("source_id", a, "max_depth", 3, "limit", 1), &out)
	if out.Count != 1 || !out.Truncated {
		t.Fatalf("limit = %+v", out)
	}
	h.OK("memory_kg_query", jsonArgs("source_id", a, "allowed_agents", []string{}), &out)
	if out.Count != 0 {
		t.Fatalf("trust no one = %+v", out)
	}
	h.OK("memory_kg_query", jsonArgs("source_id", a, "allowed_agents", []string{"ai:test"}), &out)
	if out.Count != 1 {
		t.Fatalf("allowed_agents = %+v", out)
	}
	if text := h.OK("memory_kg_query", jsonArgs("source_id", h.memory("lonely", "n")), nil); text != `{"count":0}` {
		t.Fatalf("no links = %s", text)
	}
	h.Fails("memory_kg_query", jsonArgs("source_id", "ghost-memory"), "source_id: memory not found: ghost-memory")
	h.Fails("memory_kg_query", jsonArgs("source_id", "ghost-memory", "allowed_agents", []string{}), "source_id: memory not found: ghost-memory")
}

func TestTimelineShapes(t *testing.T) {
	h := newHarness(t)
	src := h.memory("src", "n")
	var ids []string
	for _, title := range []string{"t1", "t2", "t3"} {
		id := h.memory(title, "n/"+title)
		ids = append(ids, id)
		h.OK("memory_link", jsonArgs("source_id", src, "target_id", id), nil)
	}
	h.OK("memory_link", jsonArgs("source_id", ids[0], "target_id", src), nil) // inbound: never shown
	var tl struct {
		Count  int       `json:"count"`
		Events []linkRow `json:"events"`
		Total  int       `json:"total"`
	}
	h.OK("memory_kg_timeline", jsonArgs("source_id", src), &tl)
	if tl.Count != 3 || tl.Events[0].Title != "t1" || tl.Events[2].Namespace != "n/t3" || tl.Total != 0 {
		t.Fatalf("timeline = %+v", tl)
	}
	h.OK("memory_kg_timeline", jsonArgs("source_id", src, "limit", 2), &tl)
	if tl.Count != 2 || tl.Total != 3 {
		t.Fatalf("limited timeline = %+v", tl)
	}
	h.OK("memory_kg_timeline", jsonArgs("source_id", src, "since", tl.Events[1].ValidFrom, "until", tl.Events[1].ValidFrom), &tl)
	if tl.Count != 1 || tl.Events[0].Title != "t2" {
		t.Fatalf("window = %+v", tl)
	}
	h.OK("memory_kg_timeline", jsonArgs("source_id", src, "since", "2100-01-01T00:00:00Z", "until", "2000-01-01T00:00:00Z"), &tl)
	if tl.Count != 0 {
		t.Fatalf("since > until = %+v", tl)
	}
	h.Fails("memory_kg_timeline", jsonArgs("source_id", "ghost-memory"), "source_id: memory not found: ghost-memory")
}

func TestEntities(t *testing.T) {
	h := newHarness(t)
	var reg registerResult
	h.OK("memory_entity_register", jsonArgs("canonical_name", "PostgreSQL", "namespace", "infra", "aliases", []string{"pg", "Postgres"}, "metadata", map[string]any{"team": "db"}), &reg)
	if !reg.Created || len(reg.Aliases) != 3 || reg.EntityID == "" {
		t.Fatalf("register = %+v", reg)
	}
	var again registerResult
	h.OK("memory_entity_register", jsonArgs("canonical_name", "PostgreSQL", "namespace", "infra", "aliases", []string{"PGSQL"}), &again)
	if again.Created || again.EntityID != reg.EntityID || len(again.Aliases) != 4 {
		t.Fatalf("reuse = %+v", again)
	}
	h.Fails("memory_entity_register", jsonArgs("canonical_name", "Pager", "namespace", "infra", "aliases", []string{"PG"}), "aliases[0]: alias 'PG' is already held in namespace 'infra' by entity "+reg.EntityID+" ('PostgreSQL')")
	h.memory("Redis", "infra")
	h.Fails("memory_entity_register", jsonArgs("canonical_name", "Redis", "namespace", "infra"), "not an entity")

	var found byAliasResult
	h.OK("memory_entity_get_by_alias", jsonArgs("alias", "POSTGRES"), &found)
	if !found.Found || found.EntityID != reg.EntityID || found.CanonicalName != "PostgreSQL" || found.Namespace != "infra" || len(found.Aliases) != 4 {
		t.Fatalf("by alias = %+v", found)
	}
	h.OK("memory_entity_get_by_alias", jsonArgs("alias", "postgresql", "namespace", "infra"), &found)
	if !found.Found {
		t.Fatal("canonical name is an alias")
	}
	if text := h.OK("memory_entity_get_by_alias", jsonArgs("alias", "pg", "namespace", "other"), nil); text != `{"found":false}` {
		t.Fatalf("not found = %s", text)
	}
	// The entity is a memory with the spec's shape, stamped by the session.
	resp, err := h.eng.GetMemories(context.Background(), &aimemoryv1.GetMemoriesRequest{Ids: []string{reg.EntityID}})
	if err != nil || len(resp.GetMemories()) != 1 {
		t.Fatal(err)
	}
	m := resp.GetMemories()[0]
	if m.GetTier() != "long" || string(m.GetMetadataJson()) != `{"agent_id":"ai:test","kind":"entity","team":"db"}` {
		t.Fatalf("entity memory = %v", m)
	}
}

func TestTaxonomy(t *testing.T) {
	h := newHarness(t)
	for i, ns := range []string{"org", "org/a", "org/a", "org/a/x/deep", "org/b", "org_b", "other"} {
		h.memory(jsonArgs("i", i), ns)
	}
	raw := h.OK("memory_get_taxonomy", `{}`, nil)
	want := `{"tree":{"subtree_count":7,"children":[` +
		`{"name":"org","count":1,"subtree_count":5,"children":[{"name":"a","count":2,"subtree_count":3,"children":[{"name":"x","subtree_count":1,"children":[{"name":"deep","count":1,"subtree_count":1}]}]},{"name":"b","count":1,"subtree_count":1}]},` +
		`{"name":"org_b","count":1,"subtree_count":1},{"name":"other","count":1,"subtree_count":1}]},"total_count":7}`
	if raw != want {
		t.Fatalf("taxonomy =\n%s\nwant\n%s", raw, want)
	}
	raw = h.OK("memory_get_taxonomy", jsonArgs("namespace_prefix", "org", "depth", 1), nil)
	want = `{"tree":{"namespace":"org","count":1,"subtree_count":5,"children":[{"name":"a","count":2,"subtree_count":3},{"name":"b","count":1,"subtree_count":1}]},"total_count":5}`
	if raw != want {
		t.Fatalf("taxonomy org depth 1 =\n%s\nwant\n%s", raw, want)
	}
	raw = h.OK("memory_get_taxonomy", jsonArgs("namespace_prefix", "org", "limit", 1), nil)
	want = `{"tree":{"namespace":"org","subtree_count":2,"children":[{"name":"a","count":2,"subtree_count":2}]},"total_count":5,"truncated":true}`
	if raw != want {
		t.Fatalf("taxonomy limit 1 =\n%s\nwant\n%s", raw, want)
	}
	raw = h.OK("memory_get_taxonomy", jsonArgs("namespace_prefix", "org", "depth", 0), nil)
	want = `{"tree":{"namespace":"org","count":1,"subtree_count":5},"total_count":5}`
	if raw != want {
		t.Fatalf("taxonomy depth 0 =\n%s\nwant\n%s", raw, want)
	}
	if raw = h.OK("memory_get_taxonomy", jsonArgs("namespace_prefix", "nothing"), nil); raw != `{"tree":{"namespace":"nothing","subtree_count":0},"total_count":0}` {
		t.Fatalf("empty = %s", raw)
	}
}

// TestShortSourceIDs: kg_query and kg_timeline read the id as given first
// and resolve it as a short id (one more engine call) only when no memory
// has it exactly; both ways give the same answer.
func TestShortSourceIDs(t *testing.T) {
	h := newHarness(t)
	a, b := h.memory("a", "n"), h.memory("b", "n")
	h.OK("memory_link", jsonArgs("source_id", a, "target_id", b), nil)
	c := &countingEngine{Engine: h.eng}
	f := sdktest.NewFamily(t, "graph", Families(c)).WithEngine(h.Engine)
	for _, tool := range []string{"memory_kg_query", "memory_kg_timeline"} {
		c.resolves = 0
		full := f.OK(tool, jsonArgs("source_id", a), nil)
		if !strings.Contains(full, b) || c.resolves != 0 {
			t.Fatalf("%s = %s after %d resolutions", tool, full, c.resolves)
		}
		if short := f.OK(tool, jsonArgs("source_id", a[:8]), nil); short != full || c.resolves != 1 {
			t.Errorf("%s by short id = %s after %d resolutions, by full id %s", tool, short, c.resolves, full)
		}
		f.Fails(tool, jsonArgs("source_id", a[:8]+"-nothing"), "source_id: memory not found: "+a[:8]+"-nothing")
	}
}
