package corefamily

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
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
	raw := h.OK("memory_get", `{"id":"`+id+`"}`, nil)
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
