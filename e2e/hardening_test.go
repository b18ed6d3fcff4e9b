package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
	if got := third.ok("memory_list", map[string]any{"format": "json"}); got["count"] != float64(1) {
		t.Fatalf("a host started after the old engine exited sees %v memories, want the new dir's one", got["count"])
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
