package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var lifecycleTools = []string{"memory_delete", "memory_forget", "memory_gc", "memory_promote", "memory_update"}

// lifecycleHost starts a host under --profile lifecycle (core + lifecycle).
func lifecycleHost(t *testing.T) *host {
	t.Helper()
	return newEnv(t).startHost([]string{"--profile", "lifecycle"})
}

// everything is what a refused call must leave as it was: every live
// memory of the given namespaces, as memory_list shows them in JSON.
func everything(h *host, namespaces ...string) string {
	h.t.Helper()
	var sb strings.Builder
	for _, ns := range namespaces {
		text, isErr := h.call("memory_list", map[string]any{"namespace": ns, "limit": 200, "format": "json"})
		if isErr {
			h.t.Fatalf("memory_list %s: %s", ns, text)
		}
		sb.WriteString(text)
	}
	return sb.String()
}

// refused runs a call that must fail with want and change nothing in namespaces.
func (h *host) refused(name string, args map[string]any, want string, namespaces ...string) {
	h.t.Helper()
	before := everything(h, namespaces...)
	h.fails(name, args, want)
	if after := everything(h, namespaces...); after != before {
		h.t.Errorf("%s %v was refused but changed memory:\nbefore %s\nafter  %s", name, args, before, after)
	}
}

func (h *host) getMemory(id string) map[string]any {
	h.t.Helper()
	return h.ok("memory_get", map[string]any{"id": id, "format": "json"})
}

func TestLifecycleProfileServesTheFiveTools(t *testing.T) {
	h := lifecycleHost(t)
	names := h.toolNames()
	for _, n := range lifecycleTools {
		if !slices.Contains(names, n) {
			t.Errorf("--profile lifecycle lacks %s (has %v)", n, names)
		}
	}
	admin := newEnv(t).startHost([]string{"--profile", "admin"})
	for _, n := range lifecycleTools {
		if !slices.Contains(admin.toolNames(), n) {
			t.Errorf("--profile admin lacks %s", n)
		}
	}
}

func TestLifecycleUpdate(t *testing.T) {
	h := lifecycleHost(t)
	id := h.ok("memory_store", map[string]any{"format": "json", "title": "Plan", "content": "v1", "namespace": "u", "tier": "short"})["id"].(string)
	h.ok("memory_store", map[string]any{"format": "json", "title": "Other", "content": "x", "namespace": "u"})

	out := h.ok("memory_update", map[string]any{"id": id[:8], "content": "v2", "tags": []string{"a", "b"}, "priority": 7})
	if out["updated"] != true || out["id"] != id || out["priority"] != 7.0 || out["expires_at"] == nil {
		t.Errorf("update = %v", out)
	}
	if got := h.getMemory(id); got["content"] != "v2" || !slices.Equal(strs(got["tags"]), []string{"a", "b"}) {
		t.Errorf("after update: %v", got)
	}
	// Raising to long clears the expiry.
	if out := h.ok("memory_update", map[string]any{"id": id, "tier": "long"}); out["tier"] != "long" || out["expires_at"] != nil {
		t.Errorf("update to long = %v", out)
	}
	// An expiry can be set, and cleared with "".
	later := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	if out := h.ok("memory_update", map[string]any{"id": id, "expires_at": later}); out["expires_at"] == nil {
		t.Errorf("set expiry = %v", out)
	}
	if out := h.ok("memory_update", map[string]any{"id": id, "expires_at": ""}); out["expires_at"] != nil {
		t.Errorf("clear expiry = %v", out)
	}
	if got := h.getMemory(id); got["expires_at"] != nil {
		t.Errorf("expiry still stored after clearing: %v", got["expires_at"])
	}
	// Metadata is replaced but the claimed author stays.
	h.ok("memory_update", map[string]any{"id": id, "metadata": map[string]any{"note": "n", "agent_id": "mallory"}})
	if meta, _ := h.getMemory(id)["metadata"].(map[string]any); meta["note"] != "n" || meta["agent_id"] == "mallory" {
		t.Errorf("metadata after update = %v", meta)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"content": "x"}, "id is required"},
		{map[string]any{"id": id}, "nothing to update"},
		{map[string]any{"id": id, "tier": "forever"}, "tier:"},
		{map[string]any{"id": id, "tier": 3}, "tier: must be a string"},
		{map[string]any{"id": id, "priority": 11}, "priority: must be an integer from 1 to 10"},
		{map[string]any{"id": id, "priority": 99999999999999999}, "priority: must be an integer from 1 to 10"},
		{map[string]any{"id": id, "confidence": 1.5}, "confidence"},
		{map[string]any{"id": id, "expires_at": "tomorrow"}, "expires_at: must be an RFC 3339 timestamp"},
		{map[string]any{"id": id, "tags": "a"}, "tags: must be an array of strings"},
		{map[string]any{"id": id, "metadata": map[string]any{"scope": "galaxy"}}, "scope"},
		{map[string]any{"id": id, "metadata": "x"}, "metadata: must be a JSON object"},
		{map[string]any{"id": id, "namespace": "a//b"}, "namespace"},
		{map[string]any{"id": id, "title": ""}, "title"},
		{map[string]any{"id": id, "title": "Other"}, "already exists"},
		{map[string]any{"id": id, "colour": "red"}, "colour"},
		{map[string]any{"id": "00000000-nope", "content": "x"}, "memory not found"},
	} {
		h.refused("memory_update", tc.args, tc.want, "u")
	}
}

func TestLifecycleDelete(t *testing.T) {
	h := lifecycleHost(t)
	a := h.ok("memory_store", map[string]any{"format": "json", "title": "A", "content": "x", "namespace": "d"})["id"].(string)
	b := h.ok("memory_store", map[string]any{"format": "json", "title": "B", "content": "x", "namespace": "d"})["id"].(string)

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "id is required"},
		{map[string]any{"id": ""}, "id: must not be empty"},
		{map[string]any{"id": a, "archive": "yes"}, "archive: must be a boolean"},
		{map[string]any{"id": a, "agent_id": 5}, "agent_id: must be a string"},
		{map[string]any{"id": a, "purge": true}, "purge"},
		{map[string]any{"id": "ffffffff-none"}, "memory not found"},
	} {
		h.refused("memory_delete", tc.args, tc.want, "d")
	}

	if out := h.ok("memory_delete", map[string]any{"id": a, "archive": true}); out["deleted"] != true || out["archived"] != true {
		t.Errorf("delete with archive = %v", out)
	}
	if out := h.ok("memory_delete", map[string]any{"id": b[:10]}); out["deleted"] != true || out["id"] != b || out["archived"] != nil {
		t.Errorf("delete = %v", out)
	}
	for _, id := range []string{a, b} {
		h.fails("memory_get", map[string]any{"id": id}, "memory not found")
	}
	h.refused("memory_delete", map[string]any{"id": b}, "memory not found", "d")
}

func TestLifecycleForget(t *testing.T) {
	h := lifecycleHost(t)
	store := func(title, content, ns, tier string) string {
		return h.ok("memory_store", map[string]any{"format": "json", "title": title, "content": content, "namespace": ns, "tier": tier})["id"].(string)
	}
	both := store("Draft notes", "meeting", "f", "mid")
	store("Draft only", "meeting", "f", "mid")
	store("Notes only", "meeting", "f", "mid")
	long := store("Kept", "drafting the notes", "f", "long")
	other := store("Draft notes", "elsewhere", "g", "short")

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "at least one of namespace, pattern or tier is required"},
		{map[string]any{"dry_run": true}, "at least one of namespace, pattern or tier is required"},
		{map[string]any{"tier": "all"}, "tier:"},
		{map[string]any{"namespace": "f", "tier": "forever"}, "tier:"},
		{map[string]any{"pattern": "... !!"}, "pattern: has no word to match"},
		{map[string]any{"pattern": strings.Repeat("word ", 1000)}, "pattern: must be at most 4096 characters (got 5000)"},
		{map[string]any{"pattern": 7}, "pattern: must be a string"},
		{map[string]any{"namespace": "f", "dry_run": "yes"}, "dry_run: must be a boolean"},
		{map[string]any{"namespace": "f/"}, "namespace"},
		{map[string]any{"namespace": "_agents"}, "guarded"},
		{map[string]any{"namespace": "f", "everything": true}, "everything"},
	} {
		h.refused("memory_forget", tc.args, tc.want, "f", "g")
	}

	// A dry run reports what would go and changes nothing.
	before := everything(h, "f", "g")
	dry := h.ok("memory_forget", map[string]any{"pattern": "draft notes", "dry_run": true})
	if dry["would_archive"] != 3.0 || dry["dry_run"] != true || dry["archived"] != nil {
		t.Errorf("dry run = %v", dry)
	}
	if got := refIDs(dry["memories"]); !sameSet(got, []string{both, long, other}) {
		t.Errorf("dry run listed %v, want Draft notes ×2 and Kept (every word, stemmed)", got)
	}
	if everything(h, "f", "g") != before {
		t.Error("a dry run changed memory")
	}

	out := h.ok("memory_forget", map[string]any{"pattern": "draft notes", "namespace": "f"})
	if out["archived"] != 2.0 || !sameSet(refIDs(out["memories"]), []string{both, long}) {
		t.Errorf("forget = %v", out)
	}
	for _, id := range []string{both, long} {
		h.fails("memory_get", map[string]any{"id": id}, "memory not found")
	}
	h.getMemory(other) // namespace g untouched
	if out := h.ok("memory_forget", map[string]any{"namespace": "f", "tier": "long"}); out["archived"] != 0.0 {
		t.Errorf("second forget = %v", out)
	}
}

func TestLifecycleGC(t *testing.T) {
	h := lifecycleHost(t)
	old := h.ok("memory_store", map[string]any{"format": "json", "title": "Stale", "content": "x", "namespace": "gc"})["id"].(string)
	h.ok("memory_store", map[string]any{"format": "json", "title": "Fresh", "content": "x", "namespace": "gc"})
	// Nothing expired yet.
	if out := h.ok("memory_gc", map[string]any{}); out["archived"] != 0.0 {
		t.Errorf("gc with nothing expired = %v", out)
	}
	h.ok("memory_update", map[string]any{"id": old, "expires_at": "2001-01-01T00:00:00Z"})

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"dry_run": 1}, "dry_run: must be a boolean"},
		{map[string]any{"namespace": "gc"}, "namespace"},
	} {
		h.refused("memory_gc", tc.args, tc.want, "gc")
	}
	dry := h.ok("memory_gc", map[string]any{"dry_run": true})
	if dry["would_archive"] != 1.0 || !slices.Equal(refIDs(dry["memories"]), []string{old}) {
		t.Errorf("gc dry run = %v", dry)
	}
	h.getMemory(old) // still there
	out := h.ok("memory_gc", nil)
	if out["archived"] != 1.0 || !slices.Equal(refIDs(out["memories"]), []string{old}) {
		t.Errorf("gc = %v", out)
	}
	if m := rows(out["memories"]); len(m) != 1 || m[0]["title"] != "Stale" || m[0]["namespace"] != "gc" {
		t.Errorf("gc report = %v", out["memories"])
	}
	h.fails("memory_get", map[string]any{"id": old}, "memory not found")
}

func TestLifecyclePromote(t *testing.T) {
	h := lifecycleHost(t)
	id := h.ok("memory_store", map[string]any{"format": "json", "title": "Rule", "content": "x", "namespace": "org/team/me", "tier": "short"})["id"].(string)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "id is required"},
		{map[string]any{"id": id, "to_namespace": "org/team/me"}, "to_namespace: must be a proper ancestor"},
		{map[string]any{"id": id, "to_namespace": "org/other"}, `to_namespace: "org/other" is not an ancestor of "org/team/me" (its ancestors: org/team, org)`},
		{map[string]any{"id": id, "to_namespace": ""}, "to_namespace"},
		{map[string]any{"id": id, "to_namespace": 3}, "to_namespace: must be a string"},
		{map[string]any{"id": id, "tier": "long"}, "tier"},
		{map[string]any{"id": "eeeeeeee-none"}, "memory not found"},
	} {
		h.refused("memory_promote", tc.args, tc.want, "org/team/me", "org/team", "org")
	}

	out := h.ok("memory_promote", map[string]any{"id": id[:8]})
	if out["promoted"] != true || out["mode"] != "tier" || out["id"] != id || out["tier"] != "long" {
		t.Errorf("tier promotion = %v", out)
	}
	if got := h.getMemory(id); got["tier"] != "long" || got["expires_at"] != nil {
		t.Errorf("after tier promotion: %v", got)
	}

	out = h.ok("memory_promote", map[string]any{"id": id, "to_namespace": "org"})
	clone, _ := out["clone_id"].(string)
	if out["mode"] != "vertical" || out["source_id"] != id || clone == "" || clone == id || out["to_namespace"] != "org" {
		t.Fatalf("vertical promotion = %v", out)
	}
	got := h.getMemory(clone)
	if got["namespace"] != "org" || got["title"] != "Rule" {
		t.Errorf("clone = %v", got)
	}
	if ls := rows(got["links"]); len(ls) != 1 || ls[0]["relation"] != "derived_from" {
		t.Errorf("clone links = %v", got["links"])
	}
	if again := h.ok("memory_promote", map[string]any{"id": id, "to_namespace": "org"}); again["clone_id"] != clone || again["merged"] != true {
		t.Errorf("second vertical promotion = %v", again)
	}
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func refIDs(v any) []string {
	var out []string
	for _, r := range rows(v) {
		out = append(out, r["id"].(string))
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestArchivedNodesLeaveLiveTraversals: a forgotten memory's links are
// kept in the archive, so memory_get_links and memory_kg_query no longer
// reach it, and the live memories' other links are untouched.
func TestArchivedNodesLeaveLiveTraversals(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "graph,lifecycle"})
	id := func(title string) string {
		return h.ok("memory_store", map[string]any{"format": "json", "title": title, "content": "about " + title, "namespace": "t"})["id"].(string)
	}
	a, b, c := id("A"), id("B"), id("C")
	h.ok("memory_link", map[string]any{"source_id": a, "target_id": b})
	h.ok("memory_link", map[string]any{"source_id": b, "target_id": c})
	if got := h.ok("memory_kg_query", map[string]any{"source_id": a, "max_depth": 2}); got["count"] != 2.0 {
		t.Fatalf("kg_query from A before = %v", got)
	}
	h.ok("memory_forget", map[string]any{"namespace": "t", "pattern": "about B"})
	if got := h.ok("memory_get_links", map[string]any{"id": a}); got["count"] != 0.0 {
		t.Errorf("links of A after B was archived = %v", got)
	}
	if got := h.ok("memory_get_links", map[string]any{"id": c}); got["count"] != 0.0 {
		t.Errorf("links of C after B was archived = %v", got)
	}
	if got := h.ok("memory_kg_query", map[string]any{"source_id": a, "max_depth": 2}); got["count"] != 0.0 {
		t.Errorf("kg_query from A stepped into the archive: %v", got)
	}
}
