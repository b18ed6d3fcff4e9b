package corefamily

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStore(t *testing.T) {
	h := newHarness(t)

	// The default answer is the short id alone: the caller knows the rest.
	var res map[string]any
	h.OK("memory_store", `{"title":"Postgres config","content":"max_connections=200"}`, &res)
	short, _ := res["id"].(string)
	if len(short) != 8 || len(res) != 1 {
		t.Fatalf("store answer = %v, want the short id alone", res)
	}
	// json is complete: the full id and every field.
	h.OK("memory_store", `{"title":"Postgres config","content":"max_connections=200","format":"json"}`, &res)
	id, _ := res["id"].(string)
	want := map[string]any{"id": id, "tier": "mid", "title": "Postgres config", "namespace": "global", "agent_id": "ai:test",
		"duplicate": true, "action": "updated existing memory"}
	if len(id) != 36 || !strings.HasPrefix(id, short) || !equalJSON(res, want) {
		t.Fatalf("store result = %v, want %v (no empty fields)", res, want)
	}

	// Every argument lands in the record.
	id2 := h.store("Redis", "cache ttl 60s", `{"tier":"long","namespace":"infra/cache","tags":["redis","cache"],"priority":8,"confidence":0.75,"source":"user","metadata":{"ticket":"OPS-1","n":12345678901234567890},"agent_id":"alice","scope":"team"}`)
	m := h.get(id2)
	if m.Tier != "long" || m.Namespace != "infra/cache" || strings.Join(m.Tags, ",") != "redis,cache" ||
		m.Priority != 8 || m.Confidence != 0.75 || m.Source != "user" || m.ExpiresAt != "" {
		t.Errorf("stored memory = %+v", m)
	}
	if m.Metadata["agent_id"] != "alice" || m.Metadata["scope"] != "team" || m.Metadata["ticket"] != "OPS-1" {
		t.Errorf("metadata = %v", m.Metadata)
	}
	if raw := h.OK("memory_get", `{"id":"`+id2+`"}`, nil); !strings.Contains(raw, `"n":12345678901234567890`) {
		t.Errorf("large metadata number not kept exactly: %s", raw)
	}

	// A title word shared in the namespace is a potential contradiction,
	// named by its short id.
	h.OK("memory_store", `{"title":"Postgres tuning","content":"work_mem=64MB"}`, &res)
	if pc, _ := res["potential_contradictions"].([]any); len(pc) != 1 || pc[0] != short {
		t.Errorf("potential_contradictions = %v, want [%s]", res["potential_contradictions"], short)
	}
}

func TestStoreConflicts(t *testing.T) {
	h := newHarness(t)
	h.AgentID = "alice"
	id := h.store("Deploy", "v1", `{"tier":"long","tags":["a"]}`)

	// merge (the default): same id, content replaced, tier kept at long,
	// the original author kept. The answer says what differs from the
	// call: the tier kept and the author.
	h.AgentID = "bob"
	var res map[string]any
	h.OK("memory_store", `{"title":"Deploy","content":"v2","tier":"short","priority":9}`, &res)
	want := map[string]any{"id": id[:8], "tier": "long", "agent_id": "alice", "duplicate": true, "action": "updated existing memory"}
	if !equalJSON(res, want) {
		t.Errorf("merge answer = %v, want %v", res, want)
	}
	if m := h.get(id); m.Content != "v2" || m.Priority != 9 || m.Tier != "long" || len(m.Tags) != 0 || m.Metadata["agent_id"] != "alice" {
		t.Errorf("merged memory = %+v", m)
	}

	// version: a new memory titled "Deploy (2)".
	res = nil
	h.OK("memory_store", `{"title":"Deploy","content":"v3","on_conflict":"version"}`, &res)
	if res["title"] != "Deploy (2)" || res["id"] == id || res["duplicate"] != nil {
		t.Errorf("version result = %v", res)
	}

	// error: refused, naming the existing id; nothing written.
	h.Fails("memory_store", `{"title":"Deploy","content":"v4","on_conflict":"error"}`, "CONFLICT: memory with title 'Deploy' already exists in namespace 'global' (existing id: "+id+")")
	if m := h.get(id); m.Content != "v2" {
		t.Errorf("content after refused store = %q", m.Content)
	}
}

// TestStoreWritesNothingOnBadArgument: a bad argument anywhere stops the call
// before the engine.
func TestStoreWritesNothingOnBadArgument(t *testing.T) {
	h := newHarness(t)
	bad := []struct{ args, want string }{
		{`{"title":"A","content":"c","priority":11}`, "priority: must be an integer from 1 to 10 (got 11)"},
		{`{"title":"A","content":"c","tags":["x",2]}`, "tags[1]: must be a string (got number)"},
		{`{"title":"A","content":"c","metadata":"x"}`, "metadata: must be a JSON object (got string)"},
		{`{"title":"A","content":"c","scope":"world"}`, "scope: must be one of"},
		{`{"title":"A","content":"c","agent_id":""}`, "agent_id: must be 1 to 128 bytes"},
		{`{"title":"A","content":"c","on_conflict":"overwrite"}`, "on_conflict: must be one of merge, version, error"},
		{`{"title":"A","content":"c","tier":"forever"}`, "tier: must be one of short, mid, long"},
		{`{"title":"A","content":"` + strings.Repeat("x", 65537) + `"}`, "content: must be at most 65536 bytes"},
		{`{"title":"A","content":"c","extra":1}`, `unknown argument "extra"`},
	}
	for _, b := range bad {
		h.Fails("memory_store", b.args, b.want)
	}
	var list struct{ Count int }
	h.OK("memory_list", `{"format":"json"}`, &list)
	if list.Count != 0 {
		t.Errorf("%d memories written by rejected calls", list.Count)
	}
}

// TestInvalidUTF8IsAFieldError: every string argument of every core tool
// is checked on its raw bytes and named; nothing is stored with U+FFFD.
func TestInvalidUTF8IsAFieldError(t *testing.T) {
	h := newHarness(t)
	const bad = "\xff"
	st := func(field, value string) string {
		args := map[string]string{"title": `"t"`, "content": `"c"`}
		args[field] = value
		var b strings.Builder
		b.WriteString("{")
		for k, v := range args {
			if b.Len() > 1 {
				b.WriteString(",")
			}
			b.WriteString(`"` + k + `":` + v)
		}
		return b.String() + "}"
	}
	cases := []struct{ tool, args, want string }{
		{"memory_store", st("title", `"a`+bad+`"`), "title: must be valid UTF-8"},
		{"memory_store", st("content", `"a`+bad+`"`), "content: must be valid UTF-8"},
		{"memory_store", st("content", `"\udc00"`), "content: must be valid UTF-8"},
		{"memory_store", st("namespace", `"n`+bad+`"`), "namespace: must be valid UTF-8"},
		{"memory_store", st("tier", `"`+bad+`"`), "tier: must be valid UTF-8"},
		{"memory_store", st("source", `"`+bad+`"`), "source: must be valid UTF-8"},
		{"memory_store", st("tags", `["ok","`+bad+`"]`), "tags[1]: must be valid UTF-8"},
		{"memory_store", st("metadata", `{"note":"`+bad+`"}`), "metadata.note: must be valid UTF-8"},
		{"memory_store", st("agent_id", `"`+bad+`"`), "agent_id: must be valid UTF-8"},
		{"memory_store", st("scope", `"`+bad+`"`), "scope: must be valid UTF-8"},
		{"memory_store", st("on_conflict", `"`+bad+`"`), "on_conflict: must be valid UTF-8"},
		{"memory_recall", `{"context":"` + bad + `"}`, "context: must be valid UTF-8"},
		{"memory_recall", `{"context":"x","tags":"` + bad + `"}`, "tags: must be valid UTF-8"},
		{"memory_recall", `{"context":"x","since":"` + bad + `"}`, "since: must be valid UTF-8"},
		{"memory_search", `{"query":"` + bad + `"}`, "query: must be valid UTF-8"},
		{"memory_search", `{"query":"x","as_agent":"` + bad + `"}`, "as_agent: must be valid UTF-8"},
		{"memory_list", `{"namespace":"` + bad + `"}`, "namespace: must be valid UTF-8"},
		{"memory_list", `{"format":"` + bad + `"}`, "format: must be valid UTF-8"},
		{"memory_get", `{"id":"` + bad + `"}`, "id: must be valid UTF-8"},
	}
	for _, c := range cases {
		h.Fails(c.tool, c.args, c.want)
	}
	var list struct{ Count int }
	h.OK("memory_list", `{"format":"json"}`, &list)
	if list.Count != 0 {
		t.Errorf("%d memories written by rejected calls", list.Count)
	}
}

// equalJSON compares a decoded result with want through their JSON.
func equalJSON(got, want map[string]any) bool {
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}
