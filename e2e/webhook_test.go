package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Webhooks end to end: a real engine posts to a receiver in this test
// process on loopback (allowed by config for the test), which checks each
// signature as the README says a receiver should.

// hooksTools are the subscription and message tools of the governance and
// other families.
var hooksTools = []string{"memory_subscribe", "memory_unsubscribe", "memory_list_subscriptions", "memory_notify"}

const hookConfig = "[webhooks]\nallow_loopback = true\nretry_base_ms = 20\nmax_attempts = 3\ntimeout_ms = 2000\n"

// hookReceiver answers each request with the next planned status (200 when
// the plan runs out) and records the deliveries it accepted.
type hookReceiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server

	mu          sync.Mutex
	plan        []int
	hang        chan struct{} // if set, the first request blocks until closed
	arrived     chan struct{} // a request came in (any outcome)
	accepted    []map[string]any
	deliveryIDs []string
}

func newReceiver(t *testing.T, secret string, plan ...int) *hookReceiver {
	r := &hookReceiver{t: t, secret: secret, plan: plan, arrived: make(chan struct{}, 64)}
	r.srv = httptest.NewServer(r)
	t.Cleanup(r.srv.Close)
	return r
}

// verify is the README's receiver check, in Go.
func verify(secret string, req *http.Request, body []byte) error {
	ts := req.Header.Get("X-AI-Memory-Timestamp")
	sig := req.Header.Get("X-AI-Memory-Signature")
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return fmt.Errorf("signature %q, want %q", sig, want)
	}
	var secs int64
	if _, err := fmt.Sscan(ts, &secs); err != nil || time.Since(time.Unix(secs, 0)).Abs() > 5*time.Minute {
		return fmt.Errorf("timestamp %q not current", ts)
	}
	return nil
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.arrived <- struct{}{}
	r.mu.Lock()
	hang := r.hang
	r.hang = nil
	r.mu.Unlock()
	if hang != nil {
		<-hang
		return
	}
	switch {
	case r.secret == "" && req.Header.Get("X-AI-Memory-Signature") != "":
		r.t.Errorf("an unsigned subscription's delivery carries a signature")
	case r.secret != "":
		if err := verify(r.secret, req, body); err != nil {
			r.t.Errorf("delivery fails verification: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	code := http.StatusOK
	if len(r.plan) > 0 {
		code, r.plan = r.plan[0], r.plan[1:]
	}
	if code == http.StatusOK {
		var p map[string]any
		if err := json.Unmarshal(body, &p); err != nil {
			r.t.Errorf("payload is not JSON: %s", body)
		}
		r.accepted = append(r.accepted, p)
		r.deliveryIDs = append(r.deliveryIDs, req.Header.Get("X-AI-Memory-Delivery"))
	}
	w.WriteHeader(code)
}

func (r *hookReceiver) acceptedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.accepted)
}

func hookEnv(t *testing.T) *env {
	e := newEnv(t)
	e.writeConfig(hookConfig)
	return e
}

func adminHost(e *env, agent string) *host {
	return e.startHost([]string{"--profile", "core,governance,other"}, "AI_MEMORY_AGENT_ID="+agent)
}

// subscriptions lists the caller's subscriptions.
func subscriptions(h *host) []map[string]any {
	h.t.Helper()
	out := h.ok("memory_list_subscriptions", map[string]any{})
	var subs []map[string]any
	for _, s := range out["subscriptions"].([]any) {
		subs = append(subs, s.(map[string]any))
	}
	if int(out["count"].(float64)) != len(subs) {
		h.t.Fatalf("count %v for %d subscriptions", out["count"], len(subs))
	}
	return subs
}

func TestSubscriptionToolsOverStdio(t *testing.T) {
	e := hookEnv(t)
	h := adminHost(e, "alice")
	recv := newReceiver(t, "")
	const secret = "correct-horse-battery-staple-42"

	sub := h.ok("memory_subscribe", map[string]any{"url": recv.srv.URL + "/hook", "events": "memory_store, memory_delete",
		"secret": secret, "namespace_filter": "proj", "include_content": true})
	if sub["id"] == "" || sub["events"] != "memory_store,memory_delete" || sub["namespace_filter"] != "proj" ||
		sub["signed"] != true || sub["include_content"] != true || sub["created_by"] != "alice" {
		t.Fatalf("subscribe = %v", sub)
	}
	all := h.ok("memory_subscribe", map[string]any{"url": recv.srv.URL + "/all"})
	if all["events"] != "*" || all["signed"] != false {
		t.Fatalf("defaults = %v", all)
	}

	// Each refusal names the field and the rule, and changes nothing.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "url is required"},
		{map[string]any{"url": 42}, "url: must be a string (got number)"},
		{map[string]any{"url": "ftp://example.com/x"}, "url: scheme must be http or https"},
		{map[string]any{"url": "http://example.com/x"}, "url: must use https for a non-local host"},
		{map[string]any{"url": "https://10.0.0.7/x"}, "url: target 10.0.0.7 is a private or link-local address"},
		{map[string]any{"url": "https://169.254.169.254/latest/meta-data"}, "private or link-local"},
		{map[string]any{"url": "https://[fd00::1]/x"}, "private or link-local"},
		{map[string]any{"url": "https://u:p@example.com/x"}, "url: must not carry user info"},
		{map[string]any{"url": recv.srv.URL, "events": "memory_stroe"}, "events: unknown event type \"memory_stroe\""},
		{map[string]any{"url": recv.srv.URL, "event_types": []any{"nope"}}, "events: unknown event type \"nope\""},
		{map[string]any{"url": recv.srv.URL, "namespace_filter": "a//b"}, "namespace_filter:"},
		{map[string]any{"url": recv.srv.URL, "agent_filter": "bad agent"}, "agent_filter:"},
		{map[string]any{"url": recv.srv.URL, "include_content": "yes"}, "include_content: must be a boolean (got string)"},
		{map[string]any{"url": recv.srv.URL, "secret": strings.Repeat("s", 1025)}, "secret: must be at most 1024 bytes"},
		{map[string]any{"url": recv.srv.URL, "agent_id": "bob"}, "agent_id"},
	} {
		h.fails("memory_subscribe", tc.args, tc.want)
	}
	if n := len(subscriptions(h)); n != 2 {
		t.Fatalf("after refusals: %d subscriptions, want 2", n)
	}
	h.fails("memory_list_subscriptions", map[string]any{"x": 1}, "x")

	// The secret never comes back, is not in the database file in the
	// clear, and not in any log.
	listed := h.call
	text, _ := listed("memory_list_subscriptions", map[string]any{})
	if strings.Contains(text, secret) || !strings.Contains(text, `"signed":true`) {
		t.Fatalf("list = %s", text)
	}
	h.ok("memory_store", map[string]any{"format": "json", "title": "flush", "content": "x"})
	if e.holdsInClear(t, secret) {
		t.Fatal("the store holds the secret in the clear")
	}
	if key, err := os.Stat(filepath.Join(e.dataDir, "webhook.key")); err != nil || key.Mode().Perm() != 0o600 {
		t.Fatalf("webhook.key: %v %v", key, err)
	}
	if strings.Contains(h.stderr.String(), secret) {
		t.Fatal("the host's stderr carries the secret")
	}
	if logText, _ := os.ReadFile(filepath.Join(e.dataDir, "engine.log")); strings.Contains(string(logText), secret) {
		t.Fatal("engine.log carries the secret")
	}

	// Subscriptions are their creator's: another identity neither sees nor removes them.
	bob := adminHost(e, "bob")
	if n := len(subscriptions(bob)); n != 0 {
		t.Fatalf("bob sees %d of alice's subscriptions", n)
	}
	bob.fails("memory_unsubscribe", map[string]any{"id": sub["id"]}, "belongs to another identity")
	h.fails("memory_unsubscribe", map[string]any{}, "id is required")
	h.fails("memory_unsubscribe", map[string]any{"id": 7}, "id: must be a string")
	if n := len(subscriptions(h)); n != 2 {
		t.Fatalf("after refused unsubscribes: %d, want 2", n)
	}
	if out := h.ok("memory_unsubscribe", map[string]any{"id": "no-such-subscription"}); out["removed"] != false {
		t.Fatalf("unknown id = %v", out)
	}
	if out := h.ok("memory_unsubscribe", map[string]any{"id": sub["id"]}); out["removed"] != true || out["id"] != sub["id"] {
		t.Fatalf("unsubscribe = %v", out)
	}
	left := subscriptions(h)
	if len(left) != 1 || left[0]["id"] != all["id"] {
		t.Fatalf("left = %v", left)
	}
}

// Without allow_loopback, a loopback target is refused at subscribe time.
func TestSubscribeRefusesLoopbackUnlessAllowed(t *testing.T) {
	e := newEnv(t)
	h := adminHost(e, "alice")
	h.fails("memory_subscribe", map[string]any{"url": "http://127.0.0.1:9/x"}, "loopback address (allowed only with [webhooks] allow_loopback)")
	h.fails("memory_subscribe", map[string]any{"url": "http://localhost:9/x"}, "loopback")
	if n := len(subscriptions(h)); n != 0 {
		t.Fatalf("%d subscriptions after refusals", n)
	}
}

func TestWebhookFailsTwiceThenDeliveredOnce(t *testing.T) {
	e := hookEnv(t)
	h := adminHost(e, "alice")
	const secret = "exactly as given: ünïcode & spaces "
	recv := newReceiver(t, secret, 500, 503)
	sub := h.ok("memory_subscribe", map[string]any{"url": recv.srv.URL, "secret": secret, "events": "memory_store"})
	m := h.ok("memory_store", map[string]any{"format": "json", "title": "release notes", "content": "private body text", "namespace": "proj"})

	eventually(t, 30*time.Second, "one accepted delivery", func() bool { return recv.acceptedCount() == 1 })
	var listed map[string]any
	eventually(t, 10*time.Second, "the delivery settled", func() bool {
		listed = subscriptions(h)[0]
		return listed["dispatch_count"] == float64(1)
	})
	if listed["failure_count"] != float64(2) || listed["pending"] != nil || listed["dead_letter_count"] != nil {
		t.Fatalf("listed = %v", listed)
	}
	if n := recv.acceptedCount(); n != 1 {
		t.Fatalf("delivered %d times, want once", n)
	}
	p := recv.accepted[0]
	if p["event"] != "memory_store" || p["memory_id"] != m["id"] || p["title"] != "release notes" || p["namespace"] != "proj" ||
		p["subscription_id"] != sub["id"] || p["principal"] != "alice" {
		t.Fatalf("payload = %v", p)
	}
	if _, ok := p["content"]; ok {
		t.Fatalf("payload carries content unasked: %v", p)
	}
}

func TestWebhookIncludesContentWhenAsked(t *testing.T) {
	e := hookEnv(t)
	h := adminHost(e, "alice")
	recv := newReceiver(t, "k")
	h.ok("memory_subscribe", map[string]any{"url": recv.srv.URL, "secret": "k", "include_content": true})
	h.ok("memory_store", map[string]any{"format": "json", "title": "with body", "content": "the body"})
	eventually(t, 30*time.Second, "a delivery", func() bool { return recv.acceptedCount() == 1 })
	if recv.accepted[0]["content"] != "the body" {
		t.Fatalf("payload = %v", recv.accepted[0])
	}
}

func TestWebhookDownForGoodIsDeadLettered(t *testing.T) {
	e := hookEnv(t)
	h := adminHost(e, "alice")
	recv := newReceiver(t, "k", 500, 500, 500, 500)
	h.ok("memory_subscribe", map[string]any{"url": recv.srv.URL, "secret": "k"})
	m := h.ok("memory_store", map[string]any{"format": "json", "title": "nobody hears", "content": "x"})
	var s map[string]any
	eventually(t, 30*time.Second, "a dead letter", func() bool {
		s = subscriptions(h)[0]
		return s["dead_letter_count"] == float64(1)
	})
	dl := s["dead_letters"].([]any)[0].(map[string]any)
	if dl["memory_id"] != m["id"] || dl["attempts"] != float64(3) || !strings.Contains(dl["last_error"].(string), "500") ||
		s["failure_count"] != float64(3) || s["dispatch_count"] != float64(0) || s["pending"] != nil {
		t.Fatalf("subscription = %v", s)
	}
	if n := recv.acceptedCount(); n != 0 {
		t.Fatalf("accepted %d", n)
	}
}

// The engine dies (kill -9) while a delivery is in flight: the event and
// its queued delivery are on disk, so the restarted engine delivers it.
func TestWebhookDeliveredAfterEngineKill9(t *testing.T) {
	e := hookEnv(t)
	h := adminHost(e, "alice")
	recv := newReceiver(t, "k")
	hang := make(chan struct{})
	recv.hang = hang
	h.ok("memory_subscribe", map[string]any{"url": recv.srv.URL, "secret": "k"})
	pid := theEngine(t, e, nil)
	m := h.ok("memory_store", map[string]any{"format": "json", "title": "survives", "content": "x"})
	select {
	case <-recv.arrived: // the first attempt is in flight, and hangs
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery attempt")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitExit(t, pid)
	close(hang)
	theEngine(t, e, map[int]bool{pid: true}) // the host's keeper respawns it
	eventually(t, 30*time.Second, "the delivery after the restart", func() bool { return recv.acceptedCount() == 1 })
	if recv.accepted[0]["memory_id"] != m["id"] {
		t.Fatalf("payload = %v", recv.accepted[0])
	}
}
