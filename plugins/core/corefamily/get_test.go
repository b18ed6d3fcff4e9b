package corefamily

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestGet(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("word ", 1000) // 5000 bytes: get never cuts
	id := h.store("Big", long, `{"tags":["t"]}`)

	m := h.get(id)
	if m.ID != id || m.Title != "Big" || m.Content != long || m.Tier != "mid" || m.Namespace != "global" ||
		m.Priority != 5 || m.Confidence != 1 || m.Source != "claude" || m.Metadata["agent_id"] != "ai:test" {
		t.Errorf("get = %+v", m)
	}
	for name, ts := range map[string]string{"created_at": m.CreatedAt, "updated_at": m.UpdatedAt, "expires_at": m.ExpiresAt} {
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			t.Errorf("%s = %q: not RFC 3339", name, ts)
		}
	}

	// Absent and zero fields are left out, not null.
	raw := h.OK("memory_get", `{"id":"`+id+`","format":"json"}`, nil)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"last_accessed_at", "access_count", "links", "score"} {
		if _, ok := fields[absent]; ok {
			t.Errorf("%s present in %s", absent, raw[:200])
		}
	}

	// A unique prefix finds it.
	if got := h.get(id[:8]); got.ID != id {
		t.Errorf("get by prefix = %s, want %s", got.ID, id)
	}
	h.Fails("memory_get", `{"id":"ffffffff-0000-0000-0000-000000000000"}`, "memory not found: ffffffff-0000-0000-0000-000000000000")
	h.Fails("memory_get", `{"id":""}`, "id: must not be empty")
	h.Fails("memory_get", `{"id":"x","with_links":true}`, `unknown argument "with_links"`)
}

func TestGetAmbiguousPrefix(t *testing.T) {
	h := newHarness(t)
	// 17 uuids over 16 possible first hex digits: two must share one.
	first := map[byte][]string{}
	for i := range 17 {
		id := h.store("m"+string(rune('a'+i)), "c", "")
		first[id[0]] = append(first[id[0]], id)
	}
	for c, group := range first {
		if len(group) > 1 {
			h.Fails("memory_get", `{"id":"`+string(c)+`"}`, "ambiguous ID prefix '"+string(c)+"'")
			return
		}
	}
	t.Fatal("no shared prefix among 17 ids")
}

// TestGetCard: the default answer is a card: the title, the fields that
// differ from their defaults (and from the session's own agent and
// namespace), the links by short id, then the whole content unescaped;
// no id (the caller gave it) and no timestamps. toon is the listing's full
// row plus the links with their times.
func TestGetCard(t *testing.T) {
	h := newHarness(t)
	plain := h.store("Plain", "line one\nline two | with a pipe", "")
	rich := h.store("Rich", "body", `{"tier":"long","namespace":"infra","tags":["db","ops"],"priority":8,"confidence":0.5,"source":"user","agent_id":"ai:bob","scope":"team","metadata":{"ticket":"OPS-1"}}`)
	if got, want := h.OK("memory_get", `{"id":"`+plain+`"}`, nil), "title:Plain\ncontent:\nline one\nline two | with a pipe"; got != want {
		t.Errorf("card of a memory with every default = %q, want %q", got, want)
	}
	if _, err := h.eng.PutLink(context.Background(), &aimemoryv1.PutLinkRequest{SourceId: rich, TargetId: plain, Relation: "supersedes"}); err != nil {
		t.Fatal(err)
	}
	got := h.OK("memory_get", `{"id":"`+rich[:8]+`"}`, nil)
	want := "title:Rich\n" +
		`tier:long|namespace:infra|priority:8|confidence:0.5|tags:db,ops|source:user|agent_id:ai:bob|scope:team|metadata:{"ticket":"OPS-1"}` + "\n" +
		"links[source_id|relation|target_id]:\n" + rich[:8] + "|supersedes|" + plain[:8] + "\n" +
		"content:\nbody"
	if got != want {
		t.Errorf("card =\n%s\nwant\n%s", got, want)
	}

	toon := h.OK("memory_get", `{"id":"`+rich+`","format":"toon"}`, nil)
	for _, part := range []string{"memories[id|title|tier|namespace|", rich + "|Rich|long|infra|8|", "created_at", "links[source_id|relation|target_id|created_at]:\n" + rich + "|supersedes|" + plain + "|"} {
		if !strings.Contains(toon, part) {
			t.Errorf("toon lacks %q:\n%s", part, toon)
		}
	}
	h.Fails("memory_get", `{"id":"`+rich+`","format":"yaml"}`, "format: must be one of toon_compact, toon, json")
}
