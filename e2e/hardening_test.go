package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// An engine whose data dir was deleted and recreated under it must not
// remove its successor's socket when it exits: every host started after
// that found no socket, could not start an engine (the successor holds
// the lock) and timed out.
func TestEngineRemovesOnlyItsOwnSocket(t *testing.T) {
	e := newEnv(t)
	first := e.startHost(nil)
	first.ok("memory_store", map[string]any{"title": "in the old dir", "content": "x"})
	old := e.enginePids()
	if len(old) != 1 {
		t.Fatalf("engines before the data dir was recreated: %v, want one", old)
	}

	if err := os.RemoveAll(e.dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	second := e.startHost(nil)
	second.ok("memory_store", map[string]any{"title": "in the new dir", "content": "x"})
	sock := filepath.Join(e.dataDir, "engine.sock")
	before, err := os.Lstat(sock)
	if err != nil {
		t.Fatalf("the new engine's socket: %v", err)
	}

	// The old engine idles out once its host is gone (3 s in tests).
	first.close()
	eventually(t, 20*time.Second, "the old engine to exit", func() bool { return !slices.Contains(e.enginePids(), old[0]) })

	after, err := os.Lstat(sock)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the new engine's socket after the old engine exited: %v (same file: %v)", err, err == nil && os.SameFile(before, after))
	}
	third := e.startHost(nil)
	stored := third.ok("memory_store", map[string]any{"title": "after the old engine", "content": "x"})
	if got := third.ok("memory_get", map[string]any{"id": stored["id"], "format": "json"}); got["title"] != "after the old engine" {
		t.Fatalf("a host started after the old engine exited: %v", got)
	}
}

// deepRequests are valid JSON-RPC requests nested deeper than the JSON
// parser reads (10,000 levels), each with the id its answer must carry: the
// id first, last (the TypeScript SDK's order), between members, and a
// string with brackets in it that must not count as nesting.
func deepRequests() map[string]string {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	return map[string]string{
		`41`:       `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"memory_store","arguments":{"title":"t","content":"c","metadata":{"x":` + deep + `}}}}`,
		`"last"`:   `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"memory_get","arguments":{"id":` + deep + `}},"id":"last"}`,
		`"middle"`: `{"jsonrpc":"2.0","params":{"x":"[[[{","y":` + deep + `},"id":"middle","method":"initialize"}`,
	}
}

// checkDeepAnswer checks the answer to a too-deep request: an Invalid
// Request error (-32600) with the request's own id, naming the limit.
func checkDeepAnswer(t *testing.T, id string, resp map[string]any) {
	t.Helper()
	got, _ := json.Marshal(resp["id"])
	errObj, _ := resp["error"].(map[string]any)
	msg, _ := errObj["message"].(string)
	if string(got) != id || errObj["code"] != float64(-32600) || !strings.Contains(msg, "deeper than 10000 levels") {
		t.Errorf("request %s nested too deep: got %v", id, resp)
	}
}

func TestTooDeepRequestIsAnsweredWithItsIDOverStdio(t *testing.T) {
	s := newEnv(t).startRaw()
	for id, line := range deepRequests() {
		s.write(line + "\n")
		var want any
		json.Unmarshal([]byte(id), &want)
		checkDeepAnswer(t, id, s.responseTo(want))
	}
	// Just under the limit, the message is read and its tool names the field.
	under := strings.Repeat("[", 9990) + strings.Repeat("]", 9990)
	resp := s.requestRaw("tools/call", `{"name":"memory_store","arguments":{"title":"t","content":"c","metadata":{"x":`+under+`}}}`)
	if text, isErr := toolResult(resp); !isErr || !contains(text, "metadata", "nest at most 32 levels") {
		t.Errorf("metadata 9,990 levels deep: got %v", resp)
	}
}

func TestTooDeepRequestIsAnsweredWithItsIDOverHTTP(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	s := e.serve()
	for id, body := range deepRequests() {
		r := s.post(nil, body, bearerHeader(key))
		var resp map[string]any
		if err := json.Unmarshal([]byte(r.body), &resp); err != nil || r.status != 200 {
			t.Errorf("request %s nested too deep: HTTP %d %.300s", id, r.status, r.body)
			continue
		}
		checkDeepAnswer(t, id, resp)
	}
}

// Every tool that changes or removes a memory by id refuses an id shorter
// than the 8-character short id results show: a one-character prefix that
// happened to be unique once made memory_delete remove an unrelated memory.
func TestShortPrefixRefusedByEveryDestructiveTool(t *testing.T) {
	s := newEnv(t).startRaw("--profile", "full")
	a := storeID(t, s, map[string]any{"title": "Alpha", "content": "kept as it is", "tags": []string{"keep"}})
	b := storeID(t, s, map[string]any{"title": "Beta", "content": "the other end"})
	c := storeID(t, s, map[string]any{"title": "Gamma", "content": "archived"})
	var done struct{ Deleted, Linked bool }
	callJSON(t, s, "memory_delete", map[string]any{"id": c, "archive": true}, &done)
	callJSON(t, s, "memory_link", map[string]any{"source_id": a, "target_id": b}, &done)
	if !done.Deleted || !done.Linked {
		t.Fatalf("setup: %+v", done)
	}

	cases := []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"memory_update", map[string]any{"id": a[:1], "title": "changed"}, "id"},
		{"memory_delete", map[string]any{"id": a[:7]}, "id"},
		{"memory_promote", map[string]any{"id": a[:3]}, "id"},
		{"memory_auto_tag", map[string]any{"id": a[:7]}, "id"},
		{"memory_consolidate", map[string]any{"ids": []string{a, b[:7]}, "title": "merged"}, "ids[1]"},
		{"memory_link", map[string]any{"source_id": a[:7], "target_id": c}, "source_id"},
		{"memory_kg_invalidate", map[string]any{"source_id": a, "target_id": b[:2], "relation": "related_to"}, "target_id"},
		{"memory_archive_restore", map[string]any{"id": c[:7]}, "id"},
		{"memory_archive_purge", map[string]any{"ids": []string{c[:7]}}, "ids[0]"},
	}
	for _, tc := range cases {
		resp := s.request("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
		if text, isErr := toolResult(resp); !isErr || !contains(text, tc.field+": must be a full id or a short id of at least 8 characters") {
			t.Errorf("%s %v: got %v", tc.tool, tc.args, resp)
		}
	}

	var got struct {
		Title, Tier string
		Tags        []string
	}
	callJSON(t, s, "memory_get", map[string]any{"id": a, "format": "json"}, &got)
	if got.Title != "Alpha" || got.Tier != "mid" || len(got.Tags) != 1 {
		t.Errorf("memory a after the refusals: %+v", got)
	}
	var links struct{ Count int }
	callJSON(t, s, "memory_get_links", map[string]any{"id": a}, &links)
	var archived struct{ Count int }
	callJSON(t, s, "memory_archive_list", map[string]any{"id": c}, &archived)
	if links.Count != 1 || archived.Count != 1 {
		t.Errorf("after the refusals: %d links of a (want 1), %d archived entries of c (want 1)", links.Count, archived.Count)
	}

	// The 8-character short id is enough.
	var deleted struct{ ID string }
	callJSON(t, s, "memory_delete", map[string]any{"id": b[:8]}, &deleted)
	if deleted.ID != b {
		t.Errorf("memory_delete by the short id %s removed %q, want %s", b[:8], deleted.ID, b)
	}
}

// Recall and search queries are at most 4,096 characters (docs/RETRIEVAL.md):
// longer is an error naming the field; the bound itself is accepted.
func TestOverlongQueryIsRefused(t *testing.T) {
	s := newEnv(t).startRaw("--profile", "full")
	storeID(t, s, map[string]any{"title": "Deploy rule", "content": "never on a Friday"})
	atBound := strings.Repeat("é", 4090) + " rule"
	over := strings.Repeat("deploy ", 700) // 4,900 characters
	for _, tc := range []struct{ tool, field string }{
		{"memory_recall", "context"}, {"memory_search", "query"}, {"memory_expand_query", "query"},
	} {
		resp := s.request("tools/call", map[string]any{"name": tc.tool, "arguments": map[string]any{tc.field: over}})
		if text, isErr := toolResult(resp); !isErr || !contains(text, tc.field+": must be at most 4096 characters (got 4900)") {
			t.Errorf("%s with a 4,900-character %s: got %.300v", tc.tool, tc.field, resp)
		}
		resp = s.request("tools/call", map[string]any{"name": tc.tool, "arguments": map[string]any{tc.field: atBound}})
		if text, isErr := toolResult(resp); isErr {
			t.Errorf("%s with a 4,095-character %s: %s", tc.tool, tc.field, text)
		}
	}
	resp := s.request("tools/call", map[string]any{"name": "memory_forget", "arguments": map[string]any{"pattern": over, "dry_run": true}})
	if text, isErr := toolResult(resp); !isErr || !contains(text, "pattern: must be at most 4096 characters") {
		t.Errorf("memory_forget with a 4,900-character pattern: got %.300v", resp)
	}
}

// "glo\u200bbal" shows as "global" but is not it: every tool refuses such
// a namespace (and the other identity-rule breaks), quoting it escaped,
// and nothing is written.
func TestZeroWidthNamespaceIsRefusedEverywhere(t *testing.T) {
	e := newEnv(t)
	s := e.startRaw("--profile", "full")
	const zw = "glo\u200bbal"
	id := storeID(t, s, map[string]any{"title": "Deploy rule", "content": "never on a Friday"})
	formatRule := `namespace: must not contain format characters (Unicode Cf: zero-width spaces and joiners, direction marks) (got "glo\u200bbal")`
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_store", map[string]any{"title": "t", "content": "c", "namespace": zw}, formatRule},
		{"memory_store", map[string]any{"title": "t", "content": "c", "namespace": "p\u0430ypal"}, "namespace: must not mix scripts"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "namespace": "cafe\u0301"}, "namespace: must be in Unicode normalization form NFC"},
		{"memory_store", map[string]any{"title": "t", "content": "c", "namespace": "priv\ue000"}, "namespace: must not contain private-use characters"},
		{"memory_store", map[string]any{"title": "Deploy\u200brule", "content": "c"}, "title: must not contain format characters"},
		{"memory_store", map[string]any{"title": "price \u202e01$", "content": "c"}, "title: must not contain format characters"},
		{"memory_recall", map[string]any{"context": "deploy", "namespace": zw}, formatRule},
		{"memory_search", map[string]any{"query": "deploy", "namespace": zw}, formatRule},
		{"memory_list", map[string]any{"namespace": zw}, formatRule},
		{"memory_update", map[string]any{"id": id, "namespace": zw}, formatRule},
		{"memory_namespace_set_standard", map[string]any{"namespace": zw, "id": id}, formatRule},
		{"memory_agent_register", map[string]any{"agent_type": "hu\u200bman"}, "agent_type: must not contain format characters"},
	} {
		resp := s.request("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
		if text, isErr := toolResult(resp); !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %+q: got %.400v, want an error containing %q", tc.tool, tc.args, resp, tc.want)
		}
	}
	var list struct{ Count int }
	callJSON(t, s, "memory_list", map[string]any{"format": "json"}, &list)
	var got struct{ Namespace string }
	callJSON(t, s, "memory_get", map[string]any{"id": id, "format": "json"}, &got)
	if list.Count != 1 || got.Namespace != "global" {
		t.Errorf("after the refusals: %d memories (want 1), the first in %q", list.Count, got.Namespace)
	}
	if out, code := e.cli("token", "create", "bob", "--namespace", zw); code == 0 || !strings.Contains(out, "must not contain format characters") {
		t.Errorf("token create --namespace with a zero-width space: exit %d\n%s", code, out)
	}
}

// Doctor names the records written before a rule existed: here a memory
// whose namespace a direct SQL write turned into "glo\u200bbal", which no
// tool can write.
func TestDoctorNamesRecordsThatBreakTheRules(t *testing.T) {
	e := newEnv(t)
	if e.dsn == "" {
		e.usePostgres(pgtest.DSN(t))
	}
	h := e.startHost(nil)
	good := h.ok("memory_store", map[string]any{"title": "Fine", "content": "x", "format": "json"})["id"].(string)
	bad := h.ok("memory_store", map[string]any{"title": "Hidden space", "content": "x", "format": "json"})["id"].(string)
	if out, _ := e.doctor(); !regexp.MustCompile(`(?m)^ok\s+records\s+\d+ records keep the record rules$`).MatchString(out) {
		t.Fatalf("doctor before any bad record:\n%s", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var raw []byte
	if err := c.QueryRow(ctx, `SELECT record FROM memories WHERE id = $1`, bad).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	m := new(aimemoryv1.Memory)
	if err := proto.Unmarshal(raw, m); err != nil {
		t.Fatal(err)
	}
	m.Namespace = "glo\u200bbal"
	if raw, err = proto.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `UPDATE memories SET namespace = $2, record = $3 WHERE id = $1`, bad, m.Namespace, raw); err != nil {
		t.Fatal(err)
	}

	out, code := e.doctor()
	want := "memory " + bad + `: namespace: must not contain format characters (Unicode Cf: zero-width spaces and joiners, direction marks) (got "glo\u200bbal")`
	if code != 1 || !regexp.MustCompile(`(?m)^FAIL\s+records\s+1 of \d+ records break the record rules`).MatchString(out) || !strings.Contains(out, want) || strings.Contains(out, good) {
		t.Errorf("doctor with a zero-width namespace stored (exit %d):\n%s", code, out)
	}
}

// cancelledCalls sends n calls of tool (args(k) for the k-th), each
// followed by a notifications/cancelled for it after 0 to 15 later calls,
// so the cancel lands before, during or after the write. It returns what
// each answer reported: the id of a call reported written, "" for one
// reported cancelled. Any other answer fails the test.
func cancelledCalls(t *testing.T, s *rawSession, n int, tool string, args func(k int) map[string]any) []string {
	t.Helper()
	const idBase = 100000
	var pending []int
	cancel := func(k int) {
		s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": idBase + k, "reason": "test"}})
	}
	for k := range n {
		s.write(callLine(idBase+k, tool, args(k)))
		pending = append(pending, k)
		for len(pending) > k%16 { // cancel the oldest once k%16 later calls were sent
			cancel(pending[0])
			pending = pending[1:]
		}
	}
	for _, k := range pending {
		cancel(k)
	}
	reported := make([]string, n)
	for k := range n {
		resp := s.responseTo(idBase + k)
		text, isErr := toolResult(resp)
		var written struct{ ID string }
		switch {
		case isErr && strings.Contains(text, "cancelled before it wrote anything; nothing was written"):
		case !isErr && json.Unmarshal([]byte(text), &written) == nil && written.ID != "":
			reported[k] = written.ID
		default:
			t.Fatalf("%s %d: an answer that is neither written nor cancelled: %v", tool, k, resp)
		}
	}
	return reported
}

// checkCancelled compares what cancelledCalls reported with the ids the
// namespace ns holds: each written one is there, nothing else is.
func checkCancelled(t *testing.T, s *rawSession, ns string, reported []string) {
	t.Helper()
	var list struct {
		Memories []struct{ ID string }
	}
	callJSON(t, s, "memory_list", map[string]any{"namespace": ns, "limit": 200, "format": "json"}, &list)
	saved := map[string]bool{}
	for _, m := range list.Memories {
		saved[m.ID] = true
	}
	written := 0
	for k, id := range reported {
		if id == "" {
			continue
		}
		written++
		if !saved[id] {
			t.Errorf("call %d: reported written as %s, not saved", k, id)
		}
	}
	if len(saved) != written {
		t.Errorf("%s holds %d memories, %d calls were reported written", ns, len(saved), written)
	}
	t.Logf("%s: %d cancelled calls, %d reported written and saved, %d reported cancelled and not saved", ns, len(reported), written, len(reported)-written)
}

// A cancelled call whose write committed is answered with its result; one
// cancelled before its write was handed to the engine is answered
// "cancelled" and wrote nothing. Stores and notifies cancelled at every
// moment, against the real binaries: what was saved is exactly what was
// reported, so a client that retries what it heard was cancelled sends no
// message twice.
func TestCancelledWritesReportWhatWasSaved(t *testing.T) {
	s := newEnv(t).startRaw("--profile", "full")
	const n = 150
	stores := cancelledCalls(t, s, n, "memory_store", func(k int) map[string]any {
		return map[string]any{"title": fmt.Sprintf("cancelled store %d", k), "content": "was it written?", "namespace": "cancel", "format": "json"}
	})
	checkCancelled(t, s, "cancel", stores)
	notes := cancelledCalls(t, s, n, "memory_notify", func(k int) map[string]any {
		return map[string]any{"target_agent_id": "ai:raw", "title": "ping", "payload": fmt.Sprintf("message %d", k)}
	})
	checkCancelled(t, s, "_messages/ai:raw", notes)
}
