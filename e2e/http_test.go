package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// served is a running `ai-memory serve`.
type served struct {
	t      testing.TB
	cmd    *exec.Cmd
	stderr *syncBuffer
	url    string // http(s)://127.0.0.1:port/mcp
	done   chan struct{}
}

var readyURL = regexp.MustCompile(`msg="ai-memory serve ready" url=(\S+)`)

// testHTTP bounds each request: a server that never answers fails the
// test instead of hanging it.
var testHTTP = &http.Client{Timeout: testwait.Deadline}

// serve starts `ai-memory serve` on a free loopback port and waits for its
// ready line (which names the port).
func (e *env) serve(args ...string) *served {
	e.t.Helper()
	s := &served{t: e.t, stderr: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(filepath.Join(e.binDir, "ai-memory"), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	s.cmd.Env = e.environ()
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	e.t.Cleanup(func() { s.cmd.Process.Kill(); testwait.Recv(e.t, s.done, "the killed server to exit") })
	deadline := time.After(30 * time.Second)
	for s.url == "" {
		if m := readyURL.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			break
		}
		select {
		case <-s.done:
			e.t.Fatalf("serve exited before it was ready:\n%s", s.stderr.String())
		case <-deadline:
			e.t.Fatalf("serve not ready after 30s:\n%s", s.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return s
}

// token creates an API key with `ai-memory token create`.
func (e *env) token(principal string, flags ...string) string {
	e.t.Helper()
	out, code := e.cli(append([]string{"token", "create", principal}, flags...)...)
	if code != 0 {
		e.t.Fatalf("token create: %s", out)
	}
	return strings.TrimSpace(out)
}

// connect opens an MCP session over HTTP (the initialize handshake that
// harnesses use today) as the holder of key.
func (s *served) connect(key string, hc *http.Client) *host {
	s.t.Helper()
	return s.connectAs(key, "e2e-http", hc)
}

// connectAs is connect for a client that names itself name.
func (s *served) connectAs(key, name string, hc *http.Client) *host {
	s.t.Helper()
	opts := []transport.StreamableHTTPCOption{}
	if key != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	}
	if hc != nil {
		opts = append(opts, transport.WithHTTPBasicClient(hc))
	}
	tr, err := transport.NewStreamableHTTP(s.url, opts...)
	if err != nil {
		s.t.Fatal(err)
	}
	h := &host{t: s.t, c: client.NewClient(tr), stderr: s.stderr}
	if err := h.c.Start(context.Background()); err != nil {
		s.t.Fatalf("start client: %v", err)
	}
	h.c.OnNotification(func(n mcp.JSONRPCNotification) {
		h.mu.Lock()
		h.notifications = append(h.notifications, n.Method)
		h.mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := h.c.Initialize(ctx, req); err != nil {
		s.t.Fatalf("initialize over HTTP: %v\nserver stderr:\n%s", err, s.stderr.String())
	}
	s.t.Cleanup(func() { h.c.Close() })
	return h
}

// reply is one raw HTTP answer.
type reply struct {
	status int
	header http.Header
	body   string
}

// post sends one raw request to the endpoint.
func (s *served) post(hc *http.Client, body string, headers map[string]string) reply {
	s.t.Helper()
	r, err := s.tryPost(hc, body, headers)
	if err != nil {
		s.t.Fatalf("POST %s: %v", s.url, err)
	}
	return r
}

// tryPost is post for a goroutine other than the test's.
func (s *served) tryPost(hc *http.Client, body string, headers map[string]string) (reply, error) {
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if hc == nil {
		hc = testHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}, nil
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func bearerHeader(key string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key}
}

func TestHTTPRefusesWhatItMust(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	s := e.serve("--allowed-origin", "https://app.example.com")

	// No token, a malformed one: 401 with a challenge that names no
	// authorization server (token mode advertises no OAuth).
	r := s.post(nil, initBody, nil)
	if r.status != 401 || r.header.Get("WWW-Authenticate") != `Bearer realm="ai-memory"` || !strings.Contains(r.body, "ai-memory token create") {
		t.Errorf("no token: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
	}
	if r := s.post(nil, initBody, bearerHeader("aim_nope")); r.status != 401 || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("bad token: %d %q", r.status, r.header.Get("WWW-Authenticate"))
	}
	resp, err := testHTTP.Get(strings.TrimSuffix(s.url, "/mcp") + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("token mode serves OAuth metadata: %d", resp.StatusCode)
	}

	// A good key works; revoked, it is refused at once by the running server.
	if r := s.post(nil, initBody, bearerHeader(key)); r.status != 200 {
		t.Fatalf("good token: %d %s", r.status, r.body)
	}
	out, _ := e.cli("token", "list", "--json")
	var list []struct{ ID string }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("token list: %v %s", err, out)
	}
	if out, code := e.cli("token", "revoke", list[0].ID); code != 0 {
		t.Fatalf("revoke: %s", out)
	}
	if r := s.post(nil, initBody, bearerHeader(key)); r.status != 401 || !strings.Contains(r.body, "revoked") {
		t.Errorf("revoked token: %d %s", r.status, r.body)
	}

	key = e.token("alice")
	// A foreign Host (DNS rebinding) and a present foreign Origin: 403.
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer " + key, "Host": "evil.example:8420"}); r.status != 403 || !strings.Contains(r.body, "Host") {
		t.Errorf("foreign Host: %d %s", r.status, r.body)
	}
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer " + key, "Origin": "https://evil.example"}); r.status != 403 || !strings.Contains(r.body, "Origin") {
		t.Errorf("foreign Origin: %d %s", r.status, r.body)
	}
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer " + key, "Origin": "https://app.example.com"}); r.status != 200 {
		t.Errorf("allowed Origin: %d %s", r.status, r.body)
	}
	// The server's own origin is not foreign.
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer " + key, "Origin": strings.TrimSuffix(s.url, "/mcp")}); r.status != 200 {
		t.Errorf("same Origin: %d %s", r.status, r.body)
	}

	// A 2 MB body, over the 1 MiB limit: a clear error, nothing read.
	big := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"memory_store","arguments":{"title":"x","content":%q}}}`, strings.Repeat("a", 2<<20))
	r = s.post(nil, big, bearerHeader(key))
	if r.status != 413 || !strings.Contains(r.body, "over the limit of 1048576 bytes") || !strings.Contains(r.body, "max_message_bytes") {
		t.Errorf("2 MB body: %d %.300s", r.status, r.body)
	}
	// The server is still there.
	if r := s.post(nil, initBody, bearerHeader(key)); r.status != 200 {
		t.Errorf("after the big body: %d %s", r.status, r.body)
	}
}

func TestHTTPRefusesQueryToken(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	s := e.serve()
	s.url += "?access_token=" + key
	if r := s.post(nil, initBody, nil); r.status != 400 || !strings.Contains(r.body, "Authorization header") {
		t.Errorf("query token: %d %s", r.status, r.body)
	}
}

func TestHTTPNonLoopbackWithoutAuthIsRefused(t *testing.T) {
	e := newEnv(t)
	cmd := command(t, filepath.Join(e.binDir, "ai-memory"), "serve", "--listen", "0.0.0.0:0", "--auth", "none")
	cmd.Env = e.environ()
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "not a loopback address") || !strings.Contains(string(out), "--auth token") {
		t.Fatalf("non-loopback --auth none: err=%v\n%s", err, out)
	}
	// On loopback it serves, unauthenticated.
	s := e.serve("--auth", "none")
	if r := s.post(nil, initBody, nil); r.status != 200 {
		t.Fatalf("loopback --auth none: %d %s", r.status, r.body)
	}
}

// Two principals share one server and its plugins, and nothing else: one's
// expansion, tool list, namespaces and denials are its own.
func TestHTTPTwoPrincipalsAreIsolated(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[mcp]\nexpansion_interval = \"0\"\n")
	aliceKey := e.token("alice", "--families", "core,graph")
	bobKey := e.token("bob", "--families", "core")
	s := e.serve()
	alice, bob := s.connect(aliceKey, nil), s.connect(bobKey, nil)
	before := bob.toolNames()

	alice.ok("memory_capabilities", map[string]any{"family": "graph", "include_schema": true})
	if !hasName(alice.toolNames(), "memory_kg_query") {
		t.Fatalf("alice's tools after expanding graph: %v", alice.toolNames())
	}
	if got := bob.toolNames(); !equalSets(got, before) || hasName(got, "memory_kg_query") {
		t.Errorf("bob's tool list changed with alice's expansion: %v (was %v)", got, before)
	}
	bob.fails("memory_kg_query", map[string]any{"id": "x"}, "not cleared for the graph family")
	// bob's credential does not grant graph: the expansion is denied, in
	// MCP, and audited with his principal.
	bob.fails("memory_capabilities", map[string]any{"family": "graph", "include_schema": true}, "its credential does not grant it")

	// Each stores in its own namespace; neither reads or writes the other's.
	stored := alice.ok("memory_store", map[string]any{"format": "json", "title": "alice plan", "content": "the zebra migration plan", "namespace": "alice"})
	bob.ok("memory_store", map[string]any{"format": "json", "title": "bob plan", "content": "the zebra budget", "namespace": "bob"})
	bob.fails("memory_store", map[string]any{"title": "intrusion", "content": "x", "namespace": "alice"}, "outside the namespaces bob may use")
	alice.fails("memory_store", map[string]any{"title": "default ns", "content": "x"}, "outside the namespaces alice may use")
	if text, _ := bob.call("memory_recall", map[string]any{"context": "zebra"}); strings.Contains(text, "alice plan") || !strings.Contains(text, "bob plan") {
		t.Errorf("bob's recall: %s", text)
	}
	if text, _ := bob.call("memory_list", map[string]any{"namespace": "alice"}); strings.Contains(text, "alice plan") {
		t.Errorf("bob lists alice's namespace: %s", text)
	}
	if text, isErr := bob.call("memory_get", map[string]any{"id": stored["id"]}); !isErr || strings.Contains(text, "zebra") {
		t.Errorf("bob gets alice's memory: %v %s", isErr, text)
	}
	if text, _ := alice.call("memory_recall", map[string]any{"context": "zebra"}); !strings.Contains(text, "alice plan") || strings.Contains(text, "bob plan") {
		t.Errorf("alice's recall: %s", text)
	}

	out, code := e.cli("audit", "list", "--json", "--agent-id", "bob")
	if code != 0 {
		t.Fatal(out)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Newest first: the engine's refusal of his store into alice's
	// namespace, then the host's denial of his graph expansion.
	if len(rows) < 2 || rows[0]["event_type"] != "access_denied" || rows[0]["tool"] != "Memories/StoreMemory" || !strings.Contains(rows[0]["reason"].(string), "outside the namespaces bob may use") {
		t.Errorf("bob's refused store in the audit log: %v", rows)
	}
	if len(rows) < 2 || rows[1]["agent_id"] != "bob" || rows[1]["family"] != "graph" || rows[1]["granted"] != false || rows[1]["attestation"] != "token" {
		t.Errorf("bob's denial in the audit log: %v", rows)
	}
}

// Both protocol eras on one endpoint: the initialize handshake of today's
// clients (connect) and a 2026-07-28 request with no session.
func TestHTTPBothProtocolEras(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	s := e.serve()
	old := s.connect(key, nil)
	old.ok("memory_store", map[string]any{"format": "json", "title": "era", "content": "from the old handshake", "namespace": "alice"})

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	hdr := map[string]string{"Authorization": "Bearer " + key, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	r := s.post(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`, hdr)
	if r.status != 200 || !strings.Contains(r.body, "memory_store") || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("2026-07-28 tools/list: %d session=%q %.400s", r.status, r.header.Get("Mcp-Session-Id"), r.body)
	}
	// The old era's GET stream opens: the front passes the writer on with
	// its Flush (a wrapper without it turns streaming off: 405).
	r = s.post(nil, initBody, bearerHeader(key))
	sid := r.header.Get("Mcp-Session-Id")
	req, _ := http.NewRequest(http.MethodGet, s.url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := testHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("GET stream: %d %q (session %q)", resp.StatusCode, resp.Header.Get("Content-Type"), sid)
	}
	resp.Body.Close()

	hdr["Mcp-Method"], hdr["Mcp-Name"] = "tools/call", "memory_recall"
	r = s.post(nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_recall","arguments":{"context":"handshake"},`+meta+`}}`, hdr)
	if r.status != 200 || !strings.Contains(r.body, "from the old handshake") {
		t.Fatalf("2026-07-28 tools/call: %d %.400s", r.status, r.body)
	}
	// A tool of a family not loaded is answered in MCP in this era too.
	hdr["Mcp-Name"] = "memory_kg_query"
	r = s.post(nil, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_kg_query","arguments":{},`+meta+`}}`, hdr)
	if r.status != 200 || !strings.Contains(r.body, `"isError":true`) || !strings.Contains(r.body, "graph family") {
		t.Fatalf("2026-07-28 call of an unloaded family's tool: %d %.400s", r.status, r.body)
	}
}

// SIGTERM: the server stops accepting connections, lets the call in
// flight answer, and exits 0.
func TestHTTPStopsGracefullyOnSIGTERM(t *testing.T) {
	e := newEnv(t)
	e.pin("faults")
	key := e.token("alice")
	s := e.serve("--profile", "core,faults")
	c := s.connect(key, nil)
	release := filepath.Join(t.TempDir(), "release")
	answered := make(chan string, 1)
	go func() {
		text, isErr, err := c.tryCall("fault_wait", map[string]any{"say": release})
		answered <- fmt.Sprint(text, isErr, err)
	}()
	eventually(t, 20*time.Second, "the call to be running", func() bool { return strings.Contains(s.stderr.String(), "fault_wait started") })
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the listener to close", func() bool {
		conn, err := net.DialTimeout("tcp", strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/mcp"), time.Second)
		if err == nil {
			conn.Close()
		}
		return err != nil
	})
	select {
	case got := <-answered:
		t.Fatalf("the call answered before it was released: %s", got)
	case <-s.done:
		t.Fatalf("serve exited with a call in flight:\n%s", s.stderr.String())
	default:
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := testwait.Recv(t, answered, "the call in flight to answer"); !strings.Contains(got, "waited_for") || !strings.Contains(got, "false <nil>") {
		t.Errorf("the call in flight: %s", got)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop on SIGTERM:\n%s", s.stderr.String())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(s.stderr.String(), "stopped on signal") {
		t.Fatalf("exit %d:\n%s", code, s.stderr.String())
	}
}

func hasName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func equalSets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !hasName(b, x) {
			return false
		}
	}
	return true
}

// insecureClient trusts pool and presents cert (nil: none).
func tlsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: testwait.Deadline, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// doctor --url checks a running server as a client sees it.
func TestDoctorChecksARunningServer(t *testing.T) {
	e := newEnv(t)
	key := e.token("ops", "--namespace", "*")
	s := e.serve()
	e.extra = append(e.extra, "OPS_TOKEN="+key)
	out, code := e.cli("doctor", "--url", s.url, "--token-env", "OPS_TOKEN", "--json")
	var r struct {
		Healthy bool
		Checks  []struct{ Name, Status, Detail string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || !r.Healthy {
		t.Fatalf("doctor --url: exit %d %v\n%s", code, err, out)
	}
	joined := fmt.Sprint(r.Checks)
	for _, want := range []string{`required (Bearer realm="ai-memory")`, "ai-memory", "protocol 2025-06-18", "6 tools for this principal"} {
		if !strings.Contains(joined, want) {
			t.Errorf("doctor --url lacks %q:\n%s", want, out)
		}
	}
	e.extra = append(e.extra, "BAD_TOKEN=aim_nope")
	if out, code := e.cli("doctor", "--url", s.url, "--token-env", "BAD_TOKEN"); code != 1 || !strings.Contains(out, "401") {
		t.Errorf("doctor with a bad token: exit %d\n%s", code, out)
	}
}
