package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestExportImportRoundTrip: memories, links (one invalidated), an
// entity, a superseded version, an archived memory with its archived
// link, a namespace standard with its policy and a queued action go out
// as JSON Lines and into a fresh data dir, where memory_get of every
// memory, the graph queries, the standard and the approval queue answer
// exactly as before, and a re-export is the same file; a second import
// changes nothing; corrupt lines are reported by number and every other
// line is imported.
func TestExportImportRoundTrip(t *testing.T) {
	e := newEnv(t)
	profile := []string{"--profile", "graph,lifecycle,governance,archive,meta", "--agent-id", "ai:alice"}
	h := e.startHost(profile)
	h.ok("memory_agent_register", map[string]any{"agent_type": "human", "capabilities": []string{"review"}})
	var ids []string
	for i := range 30 {
		m := h.ok("memory_store", map[string]any{"format": "json", "title": fmt.Sprintf("note %d", i), "content": fmt.Sprintf("content of note %d about postgres", i),
			"namespace": []string{"global", "infra", "team/a"}[i%3], "tags": []string{"t" + fmt.Sprint(i%4)}, "tier": []string{"short", "mid", "long"}[i%3]})
		ids = append(ids, m["id"].(string))
	}
	h.ok("memory_recall", map[string]any{"context": "postgres", "format": "json"}) // access counts and last_accessed_at travel too
	for i := 1; i < 10; i++ {
		h.ok("memory_link", map[string]any{"source_id": ids[0], "target_id": ids[i], "relation": "related_to"})
	}
	h.ok("memory_link", map[string]any{"source_id": ids[3], "target_id": ids[4], "relation": "supersedes"})
	h.ok("memory_kg_invalidate", map[string]any{"source_id": ids[3], "target_id": ids[4], "relation": "supersedes"})
	ent := h.ok("memory_entity_register", map[string]any{"canonical_name": "PostgreSQL", "namespace": "infra", "aliases": []string{"pg", "Postgres"}})
	ids = append(ids, ent["entity_id"].(string))
	// A superseded version; an archived memory, whose link to ids[0] moves to the archive.
	h.ok("memory_update", map[string]any{"id": ids[1], "content": "content of note 1, edited"})
	h.ok("memory_delete", map[string]any{"id": ids[6], "archive": true}) // in global: no policy
	archivedID := ids[6]
	ids = append(ids[:6], ids[7:]...)
	// A standard with its policy (alice owns team), and bob's write it queued.
	rules := h.ok("memory_store", map[string]any{"format": "json", "title": "team rules", "content": "writes need approval", "namespace": "team"})
	ids = append(ids, rules["id"].(string))
	h.ok("memory_namespace_set_standard", map[string]any{"namespace": "team", "id": rules["id"], "governance": map[string]any{"write": "approve"}})
	bob := e.startHost([]string{"--profile", "core", "--agent-id", "ai:bob"})
	if q := bob.ok("memory_store", map[string]any{"format": "json", "title": "bob's note", "content": "queued", "namespace": "team"}); q["status"] != "pending" {
		t.Fatalf("bob's store was not queued: %v", q)
	}

	fresh := filepath.Join(filepath.Dir(e.dataDir), "fresh")
	fe := &env{t: t, dataDir: fresh, config: e.config, binDir: bins}
	fe.ownDatabase(e)
	// Each data dir the CLI is pointed at is an env of its own (on
	// PostgreSQL: with a database of its own).
	envs := map[string]*env{e.dataDir: e, fresh: fe}
	cli := func(dataDir string, args ...string) (string, error) {
		on, ok := envs[dataDir]
		if !ok {
			on = &env{t: t, dataDir: dataDir, config: e.config, binDir: bins}
			on.ownDatabase(e)
			envs[dataDir] = on
		}
		cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
		cmd.Env = append(on.environ(), "AI_MEMORY_CLI_IDENTITY=cli:operator")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	file := filepath.Join(filepath.Dir(e.dataDir), "export.jsonl")
	if out, err := cli(e.dataDir, "export", file); err != nil ||
		!strings.Contains(out, "exported 32 memories, 1 archived, 1 versions, 9 links, 1 archived links, 1 entities, 1 standards, 1 pending") {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if out, err := cli(fresh, "import", file); err != nil || !strings.Contains(out, "47 created, 0 unchanged, 0 not imported") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	r := fe.startHost(profile)
	// lastSeen is when each data dir's engine last saw an agent call: its
	// own, not a record that travels.
	lastSeen := regexp.MustCompile(`"last_seen_at":"[^"]*"`)
	same := func(tool string, args map[string]any) {
		t.Helper()
		want, isErr := h.call(tool, args)
		if isErr {
			t.Fatalf("%s %v on the original: %s", tool, args, want)
		}
		got, _ := r.call(tool, args)
		if tool == "memory_agent_list" {
			want, got = lastSeen.ReplaceAllString(want, ""), lastSeen.ReplaceAllString(got, "")
		}
		if got != want {
			t.Errorf("%s %v after the round trip:\n got %s\nwant %s", tool, args, got, want)
		}
	}
	check := func() {
		for _, id := range ids {
			same("memory_get", map[string]any{"id": id, "format": "json"})
			same("memory_get_links", map[string]any{"id": id})
		}
		same("memory_kg_query", map[string]any{"source_id": ids[0], "max_depth": 3, "direction": "both"})
		same("memory_kg_timeline", map[string]any{"source_id": ids[3]})
		same("memory_entity_get_by_alias", map[string]any{"alias": "POSTGRES", "namespace": "infra"})
		same("memory_get_taxonomy", map[string]any{})
		same("memory_list", map[string]any{"format": "json", "limit": 200})
		same("memory_namespace_get_standard", map[string]any{"namespace": "team"})
		same("memory_pending_list", map[string]any{"status": "all"})
		same("memory_archive_list", map[string]any{})
		same("memory_archive_list", map[string]any{"id": archivedID})
		same("memory_archive_list", map[string]any{"id": ids[1]}) // its superseded version
		same("memory_agent_list", map[string]any{"format": "json"})
		// The archive (its row, its link, the superseded version) is what
		// a re-export carries: the same file, line for line. (The engine
		// writes agents' last-seen times into the registry once a minute;
		// this test is over long before the fresh engine's first flush.)
		again := filepath.Join(filepath.Dir(e.dataDir), "again.jsonl")
		if out, err := cli(fresh, "export", again); err != nil {
			t.Fatalf("re-export: %v\n%s", err, out)
		}
		a, _ := os.ReadFile(file)
		b, _ := os.ReadFile(again)
		if string(a) != string(b) {
			t.Errorf("re-export differs from the export:\n%s\n----\n%s", a, b)
		}
		if !strings.Contains(string(b), archivedID) || !strings.Contains(string(b), `"kind":"archived_link"`) {
			t.Errorf("re-export lacks the archived memory %s or its link", archivedID)
		}
	}
	check()

	if out, err := cli(fresh, "import", file); err != nil || !strings.Contains(out, "0 created, 47 unchanged, 0 not imported") {
		t.Fatalf("second import: %v\n%s", err, out)
	}
	check()
	// The archived link comes back with its memory on both sides.
	for _, x := range []*host{h, r} {
		x.ok("memory_archive_restore", map[string]any{"id": archivedID})
	}
	same("memory_get_links", map[string]any{"id": archivedID})
	same("memory_kg_query", map[string]any{"source_id": ids[0], "max_depth": 2, "direction": "both"})

	// The queued write is decided under the new data dir's rules, as any.
	carol := fe.startHost([]string{"--profile", "governance", "--agent-id", "ai:carol"})
	pend := carol.ok("memory_pending_list", map[string]any{})
	if pend["count"].(float64) != 1 {
		t.Fatalf("pending after import: %v", pend)
	}

	// Corrupt lines: each is reported by number; the rest is imported.
	lines, _ := os.ReadFile(file)
	all := strings.Split(strings.TrimRight(string(lines), "\n"), "\n")
	corrupt := append([]string{}, all[:3]...)
	corrupt = append(corrupt, `{"kind":"memory","record":{"id":"not-a-uuid"`, `{"kind":"gizmo"}`)
	corrupt = append(corrupt, all[3:]...)
	bad := filepath.Join(filepath.Dir(e.dataDir), "corrupt.jsonl")
	os.WriteFile(bad, []byte(strings.Join(corrupt, "\n")+"\n"), 0o600)
	third := filepath.Join(filepath.Dir(e.dataDir), "third")
	out, err := cli(third, "import", bad)
	if err == nil || !strings.Contains(out, "line 4: not a JSON object") || !strings.Contains(out, `line 5: kind: "gizmo"`) ||
		!strings.Contains(out, "47 created, 0 unchanged, 2 not imported") {
		t.Fatalf("import of a corrupt file: %v\n%s", err, out)
	}
	if out, _ := cli(third, "audit", "list", "--json"); !strings.Contains(out, `"event_type": "import"`) || !strings.Contains(out, "cli:operator") {
		t.Errorf("import not audited as the operator:\n%s", out)
	}
}

// TestExportImportSubscriptionsAndMessages: a signed webhook subscription
// and a message travel. The secret is never in the file or the output;
// into another data dir it is refused (by line) until the exporting data
// dir's webhook.key is given, then re-sealed, so a write in the new data
// dir is delivered signed with the same secret. The message is in its
// recipient's inbox there, and still only theirs.
func TestExportImportSubscriptionsAndMessages(t *testing.T) {
	e := hookEnv(t)
	alice, bob := adminHost(e, "alice"), adminHost(e, "bob")
	const secret = "s3cret shared with the receiver"
	recv := newReceiver(t, secret)
	sub := alice.ok("memory_subscribe", map[string]any{"url": recv.srv.URL, "secret": secret, "events": "memory_store"})
	alice.ok("memory_notify", map[string]any{"target_agent_id": "bob", "title": "review ready", "payload": "PR 12 needs eyes"})

	cli := func(dataDir string, args ...string) (string, error) {
		cmd := command(t, filepath.Join(bins, "ai-memory"), args...)
		cmd.Env = append(e.environ(), "AI_MEMORY_DATA_DIR="+dataDir, "AI_MEMORY_CLI_IDENTITY=cli:operator")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	file := filepath.Join(filepath.Dir(e.dataDir), "export.jsonl")
	out, err := cli(e.dataDir, "export", file)
	if err != nil || !strings.Contains(out, "1 subscriptions") {
		t.Fatalf("export: %v\n%s", err, out)
	}
	raw, _ := os.ReadFile(file)
	if strings.Contains(string(raw), secret) || !strings.Contains(string(raw), `"sealed_secret"`) {
		t.Fatalf("the export holds the secret in the clear, or not at all:\n%s", raw)
	}

	// Hosts first: the first one records the data dir's engine settings
	// ([webhooks] allow_loopback, for the receiver) before its engine starts.
	fresh := filepath.Join(filepath.Dir(e.dataDir), "fresh")
	fe := &env{t: t, dataDir: fresh, config: e.config, binDir: bins}
	fe.ownDatabase(e)
	alice2, bob2 := adminHost(fe, "alice"), adminHost(fe, "bob")
	out, err = cli(fresh, "import", file)
	if err == nil || !strings.Contains(out, "subscription "+sub["id"].(string)+": its secret is sealed with the exporting data dir's webhook.key") ||
		!strings.Contains(out, "1 not imported") || strings.Contains(out, secret) {
		t.Fatalf("import without the key: %v\n%s", err, out)
	}
	key := filepath.Join(e.dataDir, "webhook.key")
	for _, want := range []string{"1 created,", "0 created,"} {
		if out, err := cli(fresh, "import", "--webhook-key", key, file); err != nil || !strings.Contains(out, want) || strings.Contains(out, secret) {
			t.Fatalf("import with the key (want %q): %v\n%s", want, err, out)
		}
	}

	if got, want := inbox(bob2, "bob"), inbox(bob, "bob"); len(got) != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bob's inbox after the round trip:\n got %v\nwant %v", got, want)
	}
	if seen := inbox(alice2, "bob"); len(seen) != 0 {
		t.Errorf("alice reads bob's inbox after the round trip: %v", seen)
	}
	subs := subscriptions(alice2)
	if len(subs) != 1 || subs[0]["id"] != sub["id"] || subs[0]["signed"] != true { // listed to alice: hers
		t.Fatalf("subscriptions after the round trip: %v", subs)
	}
	m := alice2.ok("memory_store", map[string]any{"format": "json", "title": "after the move", "content": "stored in the new data dir"})
	delivered := func() bool { // verified against the secret by the receiver
		recv.mu.Lock()
		defer recv.mu.Unlock()
		for _, p := range recv.accepted {
			if p["memory_id"] == m["id"] && p["subscription_id"] == sub["id"] {
				return true
			}
		}
		return false
	}
	eventually(t, 30*time.Second, "a signed delivery from the new data dir", delivered)
}
