package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestShortIDs: the default format shows short ids, and every tool taking a
// memory id accepts them; a prefix two memories share is an error listing
// both.
func TestShortIDs(t *testing.T) {
	s := newEnv(t).startRaw("--profile", "graph")
	var ids []string
	for i := range 40 {
		ids = append(ids, storeID(t, s, map[string]any{"title": fmt.Sprintf("Shard %d", i), "content": fmt.Sprintf("shard %d of the index", i)}))
	}
	resp := s.request("tools/call", map[string]any{"name": "memory_recall", "arguments": map[string]any{"context": "shard", "limit": 2}})
	text, isErr := toolResult(resp)
	rows := strings.Split(text, "\n")
	if isErr || len(rows) != 4 || rows[1] != "memories[id|title|content]:" {
		t.Fatalf("recall =\n%s", text)
	}
	short := [2]string{strings.Split(rows[2], "|")[0], strings.Split(rows[3], "|")[0]}
	for _, id := range short {
		if len(id) < 8 || len(id) >= 36 {
			t.Fatalf("short id %q", id)
		}
	}
	var got struct{ ID string }
	callJSON(t, s, "memory_get", map[string]any{"id": short[0], "format": "json"}, &got)
	if !strings.HasPrefix(got.ID, short[0]) || len(got.ID) != 36 {
		t.Errorf("memory_get %s = %s", short[0], got.ID)
	}
	var linked struct{ Linked bool }
	callJSON(t, s, "memory_link", map[string]any{"source_id": short[0], "target_id": short[1]}, &linked)
	var links struct {
		Count int
		Out   []struct {
			ID string `json:"id"`
		}
	}
	callJSON(t, s, "memory_get_links", map[string]any{"id": short[0]}, &links)
	if links.Count != 1 {
		t.Errorf("links of %s after linking by short ids: %+v", short[0], links)
	}

	// 40 random ids: two of them share a first character.
	seen := map[byte]string{}
	for _, id := range ids {
		if other, ok := seen[id[0]]; ok {
			resp := s.request("tools/call", map[string]any{"name": "memory_get", "arguments": map[string]any{"id": id[:1]}})
			text, isErr := toolResult(resp)
			if !isErr || !contains(text, "ambiguous", id, other) {
				t.Errorf("ambiguous prefix %q: %s", id[:1], text)
			}
			return
		}
		seen[id[0]] = id
	}
	t.Fatal("no two of 40 ids share a first character")
}

// TestShortIDsWhereverIDsAreTaken: the short id a store answers names the
// memory in the tools that take several ids or set one on a namespace.
func TestShortIDsWhereverIDsAreTaken(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "power,governance"})
	short := func(title, content string) string {
		id, _ := h.ok("memory_store", map[string]any{"title": title, "content": content, "namespace": "svc"})["id"].(string)
		if len(id) < 8 || len(id) >= 36 {
			t.Fatalf("store answered id %q, want a short id", id)
		}
		return id
	}
	a := short("Port", "The payments API listens on port 8080.")
	b := short("Host", "The payments API runs on host db1.")
	rules := short("Rules", "Review every schema change.")
	got := h.ok("memory_consolidate", map[string]any{"ids": []string{a, b}, "title": "Payments API", "namespace": "svc"})
	if got["consolidated"] != float64(2) {
		t.Errorf("consolidate by short ids = %v", got)
	}
	// A short id and a longer prefix of the same id name one memory.
	h.fails("memory_consolidate", map[string]any{"ids": []string{rules, rules + "-"}, "title": "Twice"}, "names the same memory as ids[0]")
	set := h.ok("memory_namespace_set_standard", map[string]any{"namespace": "svc", "id": rules})
	if id, _ := set["standard_id"].(string); len(id) != 36 || !strings.HasPrefix(id, rules) {
		t.Errorf("set_standard by a short id = %v", set)
	}
}
