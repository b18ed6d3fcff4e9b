package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/tiktoken-go/tokenizer/codec"
)

var graphTools = []string{"memory_entity_get_by_alias", "memory_entity_register", "memory_get_links", "memory_get_taxonomy",
	"memory_kg_invalidate", "memory_kg_query", "memory_kg_timeline", "memory_link"}

// graphHost starts a host under --profile graph and stores a memory for
// each "namespace/title" (namespace g when there is no '/'), returning
// their ids by that name.
func graphHost(t *testing.T, names ...string) (*host, map[string]string) {
	t.Helper()
	h := newEnv(t).startHost([]string{"--profile", "graph"})
	ids := map[string]string{}
	for _, name := range names {
		ns, title := "g", name
		if i := strings.LastIndexByte(name, '/'); i > 0 {
			ns, title = name[:i], name[i+1:]
		}
		ids[name] = h.ok("memory_store", map[string]any{"format": "json", "title": title, "content": "about " + title, "namespace": ns})["id"].(string)
	}
	return h, ids
}

func rows(v any) []map[string]any {
	arr, _ := v.([]any)
	out := make([]map[string]any, len(arr))
	for i, x := range arr {
		out[i], _ = x.(map[string]any)
	}
	return out
}

func TestGraphProfileListsTheGraphToolsWithTruthfulHints(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "graph"})
	want := sorted(append(slices.Clone(coreSurface), graphTools...))
	if got := sorted(h.toolNames()); !slices.Equal(got, want) {
		t.Fatalf("tools/list under graph = %v, want %v", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var wire []json.RawMessage
	for _, tool := range res.Tools {
		if !slices.Contains(graphTools, tool.Name) {
			continue
		}
		raw, _ := json.Marshal(tool)
		wire = append(wire, raw)
		a := tool.Annotations
		switch tool.Name {
		case "memory_link", "memory_kg_invalidate", "memory_entity_register":
			if a.DestructiveHint == nil || *a.DestructiveHint || (a.ReadOnlyHint != nil && *a.ReadOnlyHint) {
				t.Errorf("%s writes without destroying; hints %+v", tool.Name, a)
			}
		default:
			if a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
				t.Errorf("%s reads only; hints %+v", tool.Name, a)
			}
		}
	}
	all, _ := json.Marshal(wire)
	n, err := codec.NewCl100kBase().Count(string(all))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the 8 graph tools cost %d cl100k_base tokens on the wire (tools/list JSON; the reference's cost 1,694)", n)
}

func TestGraphLinkAndGetLinks(t *testing.T) {
	h, id := graphHost(t, "a", "b", "c")
	r := h.ok("memory_link", map[string]any{"source_id": id["a"], "target_id": id["b"]})
	if r["linked"] != true || r["relation"] != "related_to" || r["valid_from"] == nil || r["revived"] != nil {
		t.Fatalf("link = %v", r)
	}
	if r := h.ok("memory_link", map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "related_to"}); r["unchanged"] != true {
		t.Fatalf("link again = %v", r)
	}
	h.ok("memory_link", map[string]any{"source_id": id["c"], "target_id": id["a"], "relation": "contradicts"})

	got := h.ok("memory_get_links", map[string]any{"id": id["a"]})
	out, in := rows(got["out"]), rows(got["in"])
	if got["count"] != float64(2) || len(out) != 1 || len(in) != 1 {
		t.Fatalf("get_links = %v", got)
	}
	if out[0]["id"] != id["b"] || out[0]["title"] != "b" || out[0]["observed_by"] != "ai:e2e-harness" || in[0]["id"] != id["c"] || in[0]["relation"] != "contradicts" {
		t.Fatalf("get_links rows = %v / %v", out, in)
	}
	// memory_get (core) shows the links too.
	if links := rows(h.ok("memory_get", map[string]any{"id": id["b"], "format": "json"})["links"]); len(links) != 1 || links[0]["source_id"] != id["a"] {
		t.Fatalf("memory_get links = %v", links)
	}

	// Every documented error: an isError naming the field, and nothing written.
	ghost := "00000000-0000-4000-8000-000000000000"
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"target_id": id["b"]}, "source_id is required"},
		{map[string]any{"source_id": id["a"]}, "target_id is required"},
		{map[string]any{"source_id": id["a"], "target_id": id["a"]}, "target_id: must differ from source_id"},
		{map[string]any{"source_id": id["a"], "target_id": id["c"], "relation": "depends_on"}, "relation: must be one of related_to, supersedes, contradicts, derived_from"},
		{map[string]any{"source_id": id["a"], "target_id": id["c"], "relation": 3}, "relation: must be a string"},
		{map[string]any{"source_id": ghost, "target_id": id["c"]}, "source_id: memory not found: " + ghost},
		{map[string]any{"source_id": id["a"], "target_id": ghost}, "target_id: memory not found: " + ghost},
		{map[string]any{"source_id": id["a"], "target_id": 7}, "target_id: must be a string"},
		{map[string]any{"source_id": id["a"], "target_id": strings.Repeat("x", 129)}, "target_id: must be at most 128 bytes"},
		{map[string]any{"source_id": id["a"], "target_id": id["c"], "agent_id": "someone"}, `unknown argument "agent_id"`},
	} {
		h.fails("memory_link", c.args, c.want)
	}
	h.fails("memory_get_links", map[string]any{}, "id is required")
	h.fails("memory_get_links", map[string]any{"id": ghost}, "id: memory not found")
	if got := h.ok("memory_get_links", map[string]any{"id": id["c"]}); got["count"] != float64(1) {
		t.Fatalf("a rejected link was written: %v", got)
	}
}

func TestGraphInvalidateAndRevive(t *testing.T) {
	h, id := graphHost(t, "a", "b")
	h.ok("memory_link", map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "supersedes"})
	inv := h.ok("memory_kg_invalidate", map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "supersedes", "valid_until": "2020-05-01T12:00:00+02:00"})
	if inv["found"] != true || inv["valid_until"] != "2020-05-01T10:00:00Z" || inv["previous_valid_until"] != nil {
		t.Fatalf("invalidate = %v", inv)
	}
	inv = h.ok("memory_kg_invalidate", map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "supersedes"})
	if inv["previous_valid_until"] != "2020-05-01T10:00:00Z" || inv["valid_until"] == nil {
		t.Fatalf("invalidate again = %v", inv)
	}
	link := rows(h.ok("memory_get_links", map[string]any{"id": id["a"]})["out"])[0]
	if link["valid_until"] == nil || link["invalidated_by"] != "ai:e2e-harness" {
		t.Fatalf("invalidated link = %v", link)
	}
	if got := h.ok("memory_kg_invalidate", map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "contradicts"}); len(got) != 1 || got["found"] != false {
		t.Fatalf("no such link = %v", got)
	}
	r := h.ok("memory_link", map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "supersedes"})
	if r["revived"] != true {
		t.Fatalf("link on an invalidated link = %v", r)
	}
	link = rows(h.ok("memory_get_links", map[string]any{"id": id["a"]})["out"])[0]
	if link["valid_until"] != nil || link["invalidated_by"] != nil || link["created_at"] == nil || link["valid_from"] != r["valid_from"] {
		t.Fatalf("revived link = %v", link)
	}

	ghost := "00000000-0000-4000-8000-000000000000"
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"source_id": id["a"], "target_id": id["b"]}, "relation is required"},
		{map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "likes"}, "relation: must be one of"},
		{map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "supersedes", "valid_until": "next week"}, "valid_until: must be an RFC 3339 timestamp"},
		{map[string]any{"source_id": id["a"], "target_id": id["a"], "relation": "supersedes"}, "target_id: must differ from source_id"},
		{map[string]any{"source_id": id["a"], "target_id": ghost, "relation": "supersedes"}, "target_id: memory not found"},
		{map[string]any{"target_id": id["b"], "relation": "supersedes"}, "source_id is required"},
	} {
		h.fails("memory_kg_invalidate", c.args, c.want)
	}
	if link := rows(h.ok("memory_get_links", map[string]any{"id": id["a"]})["out"])[0]; link["valid_until"] != nil {
		t.Fatalf("a rejected invalidation wrote: %v", link)
	}
}

func TestGraphQuery(t *testing.T) {
	h, id := graphHost(t, "a", "b", "c", "d", "e")
	link := func(s, d, rel string) {
		h.ok("memory_link", map[string]any{"source_id": id[s], "target_id": id[d], "relation": rel})
	}
	link("a", "b", "related_to")
	link("b", "c", "supersedes")
	link("c", "a", "related_to") // cycle
	link("c", "d", "derived_from")
	link("e", "a", "contradicts")

	q := h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "max_depth": 5})
	nodes := rows(q["nodes"])
	var got []string
	for _, n := range nodes {
		got = append(got, fmt.Sprintf("%s@%v via %v", n["title"], n["depth"], n["via"]))
	}
	want := []string{"b@1 via <nil>", fmt.Sprintf("c@2 via [%s]", id["b"]), fmt.Sprintf("d@3 via [%s %s]", id["b"], id["c"])}
	if q["count"] != float64(3) || !slices.Equal(got, want) {
		t.Fatalf("query = %v, want %v", got, want)
	}
	if n := h.ok("memory_kg_query", map[string]any{"source_id": id["a"]}); n["count"] != float64(1) {
		t.Fatalf("default depth 1 = %v", n)
	}
	if n := h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "direction": "in", "max_depth": 2}); n["count"] != float64(3) {
		t.Fatalf("direction in = %v", n)
	}
	both := rows(h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "direction": "both"})["nodes"])
	if len(both) != 3 {
		t.Fatalf("direction both = %v", both)
	}
	for _, n := range both {
		if n["dir"] == nil {
			t.Errorf("direction both without dir: %v", n)
		}
	}
	if n := h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "max_depth": 5, "relation": "related_to"}); n["count"] != float64(1) {
		t.Fatalf("relation = %v", n)
	}
	if n := h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "max_depth": 5, "limit": 2}); n["count"] != float64(2) || n["truncated"] != true {
		t.Fatalf("limit = %v", n)
	}
	if n := h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "allowed_agents": []string{}}); n["count"] != float64(0) {
		t.Fatalf("allowed_agents [] = %v", n)
	}
	if n := h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "max_depth": 5, "allowed_agents": []string{"ai:e2e-harness"}}); n["count"] != float64(3) {
		t.Fatalf("allowed_agents = %v", n)
	}

	ghost := "00000000-0000-4000-8000-000000000000"
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "source_id is required"},
		{map[string]any{"source_id": ghost}, "source_id: memory not found: " + ghost},
		{map[string]any{"source_id": id["a"], "max_depth": 0}, "max_depth: must be an integer from 1 to 5 (got 0)"},
		{map[string]any{"source_id": id["a"], "max_depth": 6}, "max_depth: must be an integer from 1 to 5 (got 6)"},
		{map[string]any{"source_id": id["a"], "max_depth": 1.5}, "max_depth: must be an integer"},
		{map[string]any{"source_id": id["a"], "max_depth": "2"}, "max_depth: must be an integer"},
		{map[string]any{"source_id": id["a"], "direction": "sideways"}, "direction: must be one of out, in, both"},
		{map[string]any{"source_id": id["a"], "relation": "depends_on"}, "relation: must be one of"},
		{map[string]any{"source_id": id["a"], "valid_at": "yesterday"}, "valid_at: must be an RFC 3339 timestamp"},
		{map[string]any{"source_id": id["a"], "allowed_agents": "ai:x"}, "allowed_agents: must be an array of strings"},
		{map[string]any{"source_id": id["a"], "allowed_agents": []string{"not valid!"}}, "allowed_agents[0]"},
		{map[string]any{"source_id": id["a"], "limit": 0}, "limit: must be an integer from 1 to 1000"},
		{map[string]any{"source_id": id["a"], "limit": 1001}, "limit: must be an integer from 1 to 1000"},
	} {
		h.fails("memory_kg_query", c.args, c.want)
	}
}

// TestGraphPointInTime: a chain whose first link is invalidated, then
// revived; a query at each instant sees the graph as it was.
func TestGraphPointInTime(t *testing.T) {
	h, id := graphHost(t, "a", "b", "c")
	instant := func() string {
		time.Sleep(5 * time.Millisecond)
		return time.Now().UTC().Format(time.RFC3339Nano)
	}
	before := instant()
	h.ok("memory_link", map[string]any{"source_id": id["a"], "target_id": id["b"]})
	h.ok("memory_link", map[string]any{"source_id": id["b"], "target_id": id["c"]})
	first := instant()
	h.ok("memory_kg_invalidate", map[string]any{"source_id": id["a"], "target_id": id["b"], "relation": "related_to"})
	gap := instant()
	h.ok("memory_link", map[string]any{"source_id": id["a"], "target_id": id["b"]})
	second := instant()
	for _, c := range []struct {
		at   string
		want float64
	}{{before, 0}, {first, 2}, {gap, 0}, {second, 2}} {
		if got := h.ok("memory_kg_query", map[string]any{"source_id": id["a"], "max_depth": 2, "valid_at": c.at}); got["count"] != c.want {
			t.Errorf("valid_at %s: %v, want %v nodes", c.at, got, c.want)
		}
	}
	tl := h.ok("memory_kg_timeline", map[string]any{"source_id": id["a"]})
	if events := rows(tl["events"]); tl["count"] != float64(2) || events[0]["valid_until"] == nil || events[1]["valid_until"] != nil {
		t.Fatalf("timeline across the revival = %v", tl)
	}
}

func TestGraphTimeline(t *testing.T) {
	h, id := graphHost(t, "hub", "x/t1", "x/t2", "x/t3")
	for _, t := range []string{"x/t1", "x/t2", "x/t3"} {
		h.ok("memory_link", map[string]any{"source_id": id["hub"], "target_id": id[t]})
	}
	h.ok("memory_link", map[string]any{"source_id": id["x/t1"], "target_id": id["hub"]}) // inbound, never shown
	tl := h.ok("memory_kg_timeline", map[string]any{"source_id": id["hub"]})
	events := rows(tl["events"])
	if tl["count"] != float64(3) || events[0]["title"] != "t1" || events[0]["namespace"] != "x" || events[2]["id"] != id["x/t3"] {
		t.Fatalf("timeline = %v", tl)
	}
	if lim := h.ok("memory_kg_timeline", map[string]any{"source_id": id["hub"], "limit": 1}); lim["count"] != float64(1) || lim["total"] != float64(3) {
		t.Fatalf("limit = %v", lim)
	}
	at := events[1]["valid_from"]
	if w := h.ok("memory_kg_timeline", map[string]any{"source_id": id["hub"], "since": at, "until": at}); w["count"] != float64(1) {
		t.Fatalf("inclusive window = %v", w)
	}
	if w := h.ok("memory_kg_timeline", map[string]any{"source_id": id["hub"], "since": "2100-01-01T00:00:00Z", "until": "2000-01-01T00:00:00Z"}); w["count"] != float64(0) {
		t.Fatalf("since > until = %v", w)
	}
	h.fails("memory_kg_timeline", map[string]any{}, "source_id is required")
	h.fails("memory_kg_timeline", map[string]any{"source_id": "00000000-0000-4000-8000-000000000000"}, "source_id: memory not found")
	h.fails("memory_kg_timeline", map[string]any{"source_id": id["hub"], "since": "monday"}, "since: must be an RFC 3339 timestamp")
	h.fails("memory_kg_timeline", map[string]any{"source_id": id["hub"], "until": 5}, "until: must be a string")
	h.fails("memory_kg_timeline", map[string]any{"source_id": id["hub"], "limit": 1001}, "limit: must be an integer from 1 to 1000")
}

func TestGraphEntities(t *testing.T) {
	h, _ := graphHost(t, "infra/Redis")
	reg := h.ok("memory_entity_register", map[string]any{"canonical_name": "PostgreSQL", "namespace": "infra", "aliases": []string{"pg", "Postgres"}})
	eid, _ := reg["entity_id"].(string)
	if reg["created"] != true || len(toStrings(reg["aliases"])) != 3 || eid == "" {
		t.Fatalf("register = %v", reg)
	}
	again := h.ok("memory_entity_register", map[string]any{"canonical_name": "PostgreSQL", "namespace": "infra", "aliases": []string{"PGSQL"}})
	if again["created"] != false || again["entity_id"] != eid || len(toStrings(again["aliases"])) != 4 {
		t.Fatalf("register again = %v", again)
	}
	// The entity is a memory core can read, stamped with the session identity.
	m := h.ok("memory_get", map[string]any{"id": eid, "format": "json"})
	meta, _ := m["metadata"].(map[string]any)
	if m["tier"] != "long" || meta["kind"] != "entity" || meta["agent_id"] != "ai:e2e-harness" || !slices.Equal(toStrings(m["tags"]), []string{"entity"}) {
		t.Fatalf("entity memory = %v", m)
	}

	found := h.ok("memory_entity_get_by_alias", map[string]any{"alias": "POSTGRES"})
	if found["found"] != true || found["entity_id"] != eid || found["canonical_name"] != "PostgreSQL" || found["namespace"] != "infra" {
		t.Fatalf("by alias = %v", found)
	}
	if f := h.ok("memory_entity_get_by_alias", map[string]any{"alias": "postgresql", "namespace": "infra"}); f["found"] != true {
		t.Fatalf("the canonical name is an alias: %v", f)
	}
	if f := h.ok("memory_entity_get_by_alias", map[string]any{"alias": "pg", "namespace": "web"}); len(f) != 1 || f["found"] != false {
		t.Fatalf("not found = %v", f)
	}

	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"canonical_name": "Pager", "namespace": "infra", "aliases": []string{"PG"}}, "aliases[0]: alias 'PG' is already held in namespace 'infra' by entity " + eid + " ('PostgreSQL')"},
		{map[string]any{"canonical_name": "Redis", "namespace": "infra"}, "not an entity"},
		{map[string]any{"namespace": "infra"}, "canonical_name is required"},
		{map[string]any{"canonical_name": "X"}, "namespace is required"},
		{map[string]any{"canonical_name": "X", "namespace": "a//b"}, "namespace: must not contain an empty segment"},
		{map[string]any{"canonical_name": "X", "namespace": "n", "aliases": []any{"ok", 1}}, "aliases[1]: must be a string"},
		{map[string]any{"canonical_name": "X", "namespace": "n", "aliases": []string{" "}}, "aliases[0]: must not be empty"},
		{map[string]any{"canonical_name": "X", "namespace": "n", "metadata": "x"}, "metadata: must be a JSON object"},
		{map[string]any{"canonical_name": "X", "namespace": "n", "agent_id": "bad id"}, "agent_id"},
	} {
		h.fails("memory_entity_register", c.args, c.want)
	}
	if f := h.ok("memory_entity_get_by_alias", map[string]any{"alias": "pager"}); f["found"] != false {
		t.Fatalf("a refused registration wrote: %v", f)
	}
	h.fails("memory_entity_get_by_alias", map[string]any{}, "alias is required")
	h.fails("memory_entity_get_by_alias", map[string]any{"alias": "x", "namespace": "/x"}, "namespace: must not start or end with '/'")
	h.fails("memory_entity_get_by_alias", map[string]any{"alias": "x", "namespace": "x/"}, "namespace: must not start or end with '/'")
	h.fails("memory_entity_get_by_alias", map[string]any{"alias": "x", "namespace": " "}, "namespace: must not be empty")
	h.fails("memory_entity_get_by_alias", map[string]any{"alias": 3}, "alias: must be a string")
}

func TestGraphTaxonomy(t *testing.T) {
	h, _ := graphHost(t, "org/a/m1", "org/a/x/m2", "org/a/y/m3", "org_b/m4", "Org/m5")
	tax := h.ok("memory_get_taxonomy", map[string]any{"namespace_prefix": "org"})
	tree, _ := tax["tree"].(map[string]any)
	if tax["total_count"] != float64(3) || tax["truncated"] != nil || tree["namespace"] != "org" || tree["subtree_count"] != float64(3) {
		t.Fatalf("taxonomy = %v", tax)
	}
	kids := rows(tree["children"])
	if len(kids) != 1 || kids[0]["name"] != "a" || kids[0]["count"] != float64(1) || len(rows(kids[0]["children"])) != 2 {
		t.Fatalf("children = %v", kids)
	}
	if all := h.ok("memory_get_taxonomy", map[string]any{"depth": 1, "limit": 2}); all["total_count"] != float64(5) || all["truncated"] != true {
		t.Fatalf("limit = %v", all)
	}
	h.fails("memory_get_taxonomy", map[string]any{"depth": 9}, "depth: must be an integer from 0 to 8")
	h.fails("memory_get_taxonomy", map[string]any{"limit": 0}, "limit: must be an integer from 1 to 10000")
	// The one namespace rule: nothing is trimmed or stripped first.
	h.fails("memory_get_taxonomy", map[string]any{"namespace_prefix": "/"}, "namespace_prefix: must not start or end with '/'")
	h.fails("memory_get_taxonomy", map[string]any{"namespace_prefix": "org/"}, "namespace_prefix: must not start or end with '/'")
	h.fails("memory_get_taxonomy", map[string]any{"namespace_prefix": " "}, "namespace_prefix: must not be empty")
	h.fails("memory_get_taxonomy", map[string]any{"namespace_prefix": "a/../b"}, "namespace_prefix")
}

// TestGraphToolsNeedTheirFamily: under core the graph tools answer with
// the family to load; once expanded they work.
func TestGraphToolsNeedTheirFamily(t *testing.T) {
	h := newEnv(t).startHost(nil)
	h.fails("memory_get_taxonomy", map[string]any{}, "graph")
	h.ok("memory_capabilities", map[string]any{"family": "graph", "include_schema": true})
	if tax := h.ok("memory_get_taxonomy", map[string]any{}); tax["total_count"] != float64(0) {
		t.Fatalf("taxonomy after expansion = %v", tax)
	}
}
