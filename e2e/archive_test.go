package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

var (
	archiveTools = []string{"memory_archive_list", "memory_archive_restore", "memory_archive_purge", "memory_archive_stats"}
	metaTools    = []string{"memory_session_start", "memory_stats", "memory_agent_register", "memory_agent_list"}
)

// archiveHost serves core, lifecycle (the removal paths), graph (links)
// and the archive family.
func archiveHost(t *testing.T) *host {
	t.Helper()
	return newEnv(t).startHost([]string{"--profile", "lifecycle,graph,archive"})
}

// archiveState is what a refused archive call must leave as it was.
func archiveState(h *host) string {
	h.t.Helper()
	list, isErr := h.call("memory_archive_list", map[string]any{"limit": 1000})
	if isErr {
		h.t.Fatalf("memory_archive_list: %s", list)
	}
	stats, isErr := h.call("memory_archive_stats", nil)
	if isErr {
		h.t.Fatalf("memory_archive_stats: %s", stats)
	}
	return list + stats
}

// archiveRefused runs a call that must fail with want and change neither
// the archive nor the live memories of namespaces.
func (h *host) archiveRefused(name string, args map[string]any, want string, namespaces ...string) {
	h.t.Helper()
	before := archiveState(h)
	h.refused(name, args, want, namespaces...)
	if after := archiveState(h); after != before {
		h.t.Errorf("%s %v was refused but changed the archive:\nbefore %s\nafter  %s", name, args, before, after)
	}
}

func TestArchiveProfileServesTheFourTools(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "archive"})
	for _, n := range archiveTools {
		if !slices.Contains(h.toolNames(), n) {
			t.Errorf("--profile archive lacks %s (has %v)", n, h.toolNames())
		}
	}
}

// A memory removed by any path comes back with its content, tags and
// metadata, and a fresh expiry for its tier.
func TestArchiveRestoreAfterEveryRemovalPath(t *testing.T) {
	h := archiveHost(t)
	meta := map[string]any{"note": "keep me", "ticket": 42.0}
	store := func(title, tier string) string {
		return h.ok("memory_store", map[string]any{"format": "json", "title": title, "content": "body of " + title, "namespace": "r",
			"tier": tier, "tags": []string{"x", "y"}, "metadata": meta})["id"].(string)
	}
	check := func(path, id, title, tier, content string) {
		t.Helper()
		got := h.getMemory(id)
		gotMeta, _ := got["metadata"].(map[string]any)
		if got["content"] != content || got["title"] != title || !slices.Equal(strs(got["tags"]), []string{"x", "y"}) ||
			gotMeta["note"] != "keep me" || gotMeta["ticket"] != 42.0 || got["tier"] != tier {
			t.Errorf("%s: restored memory = %v", path, got)
		}
		switch tier {
		case "long":
			if got["expires_at"] != nil {
				t.Errorf("%s: a restored long memory has expiry %v", path, got["expires_at"])
			}
		default:
			exp, err := time.Parse(time.RFC3339Nano, got["expires_at"].(string))
			if err != nil || time.Until(exp) < 6*24*time.Hour {
				t.Errorf("%s: restored expiry %v is not fresh for %s", path, got["expires_at"], tier)
			}
		}
		if list := h.ok("memory_list", map[string]any{"namespace": "r", "limit": 200, "format": "json"}); !slices.Contains(refIDs(list["memories"]), id) {
			t.Errorf("%s: restored memory not listed: %v", path, list)
		}
	}
	reasonOf := func(id string) string {
		t.Helper()
		l := h.ok("memory_archive_list", map[string]any{"id": id})
		r := rows(l["archived"])
		if len(r) != 1 {
			t.Fatalf("archive_list {id} = %v", l)
		}
		return r[0]["reason"].(string)
	}

	// gc
	gc := store("Collected", "mid")
	h.ok("memory_update", map[string]any{"id": gc, "expires_at": "2001-01-01T00:00:00Z"})
	h.ok("memory_gc", nil)
	if r := reasonOf(gc); r != "ttl_expired" {
		t.Errorf("gc reason = %s", r)
	}
	if out := h.ok("memory_archive_restore", map[string]any{"id": gc}); out["restored"] != true || out["expires_at"] == nil {
		t.Errorf("restore after gc = %v", out)
	}
	check("gc", gc, "Collected", "mid", "body of Collected")

	// forget
	fg := store("Forgotten", "mid")
	h.ok("memory_forget", map[string]any{"namespace": "r", "pattern": "Forgotten"})
	if r := reasonOf(fg); r != "forget" {
		t.Errorf("forget reason = %s", r)
	}
	h.ok("memory_archive_restore", map[string]any{"id": fg})
	check("forget", fg, "Forgotten", "mid", "body of Forgotten")

	// delete with archive, a long memory, with a link to a live memory
	del := store("Deleted", "long")
	other := store("Other", "long")
	h.ok("memory_link", map[string]any{"source_id": del, "target_id": other})
	h.ok("memory_delete", map[string]any{"id": del, "archive": true})
	if r := reasonOf(del); r != "delete" {
		t.Errorf("delete reason = %s", r)
	}
	if out := h.ok("memory_archive_restore", map[string]any{"id": del}); out["links_restored"] != 1.0 {
		t.Errorf("restore after delete = %v", out)
	}
	check("delete", del, "Deleted", "long", "body of Deleted")
	if got := h.ok("memory_get_links", map[string]any{"id": del}); got["count"] != 1.0 {
		t.Errorf("links after restore = %v", got)
	}

	// superseded by an update: the old version is listed and restorable
	up := store("Updated", "mid")
	h.ok("memory_update", map[string]any{"id": up, "content": "new text", "tags": []string{"z"}, "metadata": map[string]any{}})
	hist := h.ok("memory_archive_list", map[string]any{"id": up})
	vs := rows(hist["versions"])
	if len(vs) != 1 || vs[0]["content"] != "body of Updated" || vs[0]["reason"] != "superseded" {
		t.Fatalf("history of an updated memory = %v", hist)
	}
	h.ok("memory_archive_restore", map[string]any{"id": up, "version": vs[0]["archived_at"]})
	check("superseded", up, "Updated", "mid", "body of Updated")
	// The version it replaced is history too now.
	if vs := rows(h.ok("memory_archive_list", map[string]any{"id": up})["versions"]); len(vs) != 2 || vs[1]["content"] != "new text" {
		t.Errorf("history after restoring a version = %v", vs)
	}
}

func TestArchiveRestoreTitleTaken(t *testing.T) {
	h := archiveHost(t)
	old := h.ok("memory_store", map[string]any{"format": "json", "title": "Plan", "content": "old plan", "namespace": "c", "tags": []string{"a"}})["id"].(string)
	h.ok("memory_delete", map[string]any{"id": old, "archive": true})
	cur := h.ok("memory_store", map[string]any{"format": "json", "title": "Plan", "content": "new plan", "namespace": "c"})["id"].(string)

	h.archiveRefused("memory_archive_restore", map[string]any{"id": old}, "already exists", "c")
	h.archiveRefused("memory_archive_restore", map[string]any{"id": old, "on_conflict": "error"}, "already exists", "c")
	out := h.ok("memory_archive_restore", map[string]any{"id": old, "on_conflict": "merge"})
	if out["merged_into"] != cur || out["restored"] != true {
		t.Errorf("restore with merge = %v", out)
	}
	if got := h.getMemory(cur); got["content"] != "old plan" || !slices.Equal(strs(got["tags"]), []string{"a"}) {
		t.Errorf("merged memory = %v", got)
	}
	h.fails("memory_get", map[string]any{"id": old}, "memory not found")
	h.fails("memory_archive_list", map[string]any{"id": old}, "not found in archive")
	// The merged-into memory's previous text is its history.
	if vs := rows(h.ok("memory_archive_list", map[string]any{"id": cur})["versions"]); len(vs) != 1 || vs[0]["content"] != "new plan" {
		t.Errorf("history of the merged-into memory = %v", vs)
	}
}

func TestArchiveRestoreErrors(t *testing.T) {
	h := archiveHost(t)
	id := h.ok("memory_store", map[string]any{"format": "json", "title": "T", "content": "x", "namespace": "e"})["id"].(string)
	gone := h.ok("memory_store", map[string]any{"format": "json", "title": "G", "content": "x", "namespace": "e"})["id"].(string)
	h.ok("memory_delete", map[string]any{"id": gone, "archive": true})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "id is required"},
		{map[string]any{"id": ""}, "id: must not be empty"},
		{map[string]any{"id": 7}, "id: must be a string"},
		{map[string]any{"id": "ffffffff-none"}, "not found in archive"},
		{map[string]any{"id": gone[:8]}, "not found in archive"}, // exact ids only
		{map[string]any{"id": id}, "not found in archive"},       // live, never archived
		{map[string]any{"id": gone, "on_conflict": "overwrite"}, "on_conflict"},
		{map[string]any{"id": gone, "version": "yesterday"}, "version: must be an RFC 3339 timestamp"},
		{map[string]any{"id": gone, "version": "2020-01-01T00:00:00Z"}, "not found in archive"},
		{map[string]any{"id": gone, "colour": "red"}, "colour"},
	} {
		h.archiveRefused("memory_archive_restore", tc.args, tc.want, "e")
	}
}

func TestArchiveListAndStats(t *testing.T) {
	h := archiveHost(t)
	var ids []string
	for i, ns := range []string{"a", "a", "b"} {
		id := h.ok("memory_store", map[string]any{"format": "json", "title": "M" + string(rune('0'+i)), "content": "c", "namespace": ns, "tags": []string{"t"}})["id"].(string)
		ids = append(ids, id)
	}
	h.ok("memory_delete", map[string]any{"id": ids[0], "archive": true})
	h.ok("memory_forget", map[string]any{"namespace": "a"})
	h.ok("memory_delete", map[string]any{"id": ids[2], "archive": true})

	all := h.ok("memory_archive_list", nil)
	got := rows(all["archived"])
	if all["count"] != 3.0 || all["total"] != 3.0 || len(got) != 3 || got[0]["id"] != ids[2] {
		t.Fatalf("archive list = %v", all)
	}
	if tags, isArr := got[0]["tags"].([]any); !isArr || len(tags) != 1 || tags[0] != "t" {
		t.Errorf("tags are not the array stored: %v", got[0]["tags"])
	}
	if l := h.ok("memory_archive_list", map[string]any{"namespace": "a"}); l["count"] != 2.0 {
		t.Errorf("list namespace a = %v", l)
	}
	if l := h.ok("memory_archive_list", map[string]any{"limit": 1, "offset": 1}); l["count"] != 1.0 || l["total"] != 3.0 || rows(l["archived"])[0]["id"] != ids[1] {
		t.Errorf("list page 2 = %v", l)
	}

	st := h.ok("memory_archive_stats", nil)
	if st["archived_total"] != 3.0 || st["size_bytes"].(float64) <= 0 || st["oldest_at"] == nil || st["newest_at"] == nil {
		t.Errorf("stats = %v", st)
	}
	byNS, _ := json.Marshal(st["by_namespace"])
	byReason, _ := json.Marshal(st["by_reason"])
	if string(byNS) != `[{"count":2,"namespace":"a"},{"count":1,"namespace":"b"}]` ||
		string(byReason) != `[{"count":2,"reason":"delete"},{"count":1,"reason":"forget"}]` {
		t.Errorf("stats by namespace %s, by reason %s", byNS, byReason)
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_archive_list", map[string]any{"limit": 0}, "limit: must be an integer from 1 to 1000"},
		{"memory_archive_list", map[string]any{"limit": 1001}, "limit: must be an integer from 1 to 1000"},
		{"memory_archive_list", map[string]any{"limit": "5"}, "limit: must be"},
		{"memory_archive_list", map[string]any{"offset": -1}, "offset"},
		{"memory_archive_list", map[string]any{"reason": "forget"}, "reason"}, // not an argument (stats has the counts)
		{"memory_archive_list", map[string]any{"namespace": "a//b"}, "namespace"},
		{"memory_archive_list", map[string]any{"id": ids[0], "namespace": "a"}, "do not apply"},
		{"memory_archive_list", map[string]any{"id": ids[0], "offset": 1}, "do not apply"},
		{"memory_archive_list", map[string]any{"id": "ffffffff-none"}, "not found in archive"},
		{"memory_archive_list", map[string]any{"since": "x"}, "since"},
		{"memory_archive_stats", map[string]any{"namespace": "a"}, "namespace"},
	} {
		h.archiveRefused(tc.tool, tc.args, tc.want, "a", "b")
	}
}

// An invalid purge argument purges nothing; only an explicit cut-off or
// explicit ids purge.
func TestArchivePurge(t *testing.T) {
	h := archiveHost(t)
	var ids []string
	for _, title := range []string{"P1", "P2", "P3"} {
		id := h.ok("memory_store", map[string]any{"format": "json", "title": title, "content": "c", "namespace": "p"})["id"].(string)
		h.ok("memory_delete", map[string]any{"id": id, "archive": true})
		ids = append(ids, id)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "give exactly one"},
		{map[string]any{"dry_run": true}, "give exactly one"},
		{map[string]any{"older_than_days": -1}, "older_than_days: must be an integer from 0"},
		{map[string]any{"older_than_days": "30"}, "older_than_days: must be"},
		{map[string]any{"older_than_days": 30.5}, "older_than_days: must be"},
		{map[string]any{"older_than_days": nil}, "give exactly one"}, // null is absent, never "all",
		{map[string]any{"older_than_days": 1, "ids": []string{ids[0]}}, "give exactly one"},
		{map[string]any{"ids": []string{}}, "ids: must hold 1 to 1000 ids"},
		{map[string]any{"ids": "all"}, "ids: must be an array of strings"},
		{map[string]any{"ids": []string{""}}, "ids[0]: must not be empty"},
		{map[string]any{"ids": nil}, "give exactly one"},
		{map[string]any{"older_than_days": 0, "dry_run": "yes"}, "dry_run: must be a boolean"},
		{map[string]any{"all": true}, "all"},
	} {
		h.archiveRefused("memory_archive_purge", tc.args, tc.want, "p")
	}
	if out := h.ok("memory_archive_purge", map[string]any{"older_than_days": 30}); out["purged"] != 0.0 {
		t.Errorf("purge older than 30 days of fresh rows = %v", out)
	}
	before := archiveState(h)
	dry := h.ok("memory_archive_purge", map[string]any{"older_than_days": 0, "dry_run": true})
	if dry["would_purge"] != 3.0 || dry["dry_run"] != true || !slices.Equal(refIDs(dry["memories"]), ids) {
		t.Errorf("dry run = %v", dry)
	}
	if archiveState(h) != before {
		t.Errorf("a dry run changed the archive")
	}
	out := h.ok("memory_archive_purge", map[string]any{"ids": []string{ids[1], "ffffffff-none"}})
	if out["purged"] != 1.0 || !slices.Equal(strs(out["not_found"]), []string{"ffffffff-none"}) {
		t.Errorf("purge by ids = %v", out)
	}
	h.fails("memory_archive_restore", map[string]any{"id": ids[1]}, "not found in archive")
	if out := h.ok("memory_archive_purge", map[string]any{"older_than_days": 0}); out["purged"] != 2.0 {
		t.Errorf("purge older than 0 days = %v", out)
	}
	if st := h.ok("memory_archive_stats", nil); st["archived_total"] != 0.0 {
		t.Errorf("stats after purging all = %v", st)
	}
}
