package httpfront

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// echoPlugins answers every call with the agent id it was made for.
type echoPlugins struct{}

func (echoPlugins) Catalog() *catalog.Set { return testSet }
func (echoPlugins) Tools(string) []*aimemoryv1.ToolDefinition {
	return []*aimemoryv1.ToolDefinition{{Name: "memory_store", Description: "t", InputSchemaJson: []byte(`{"type":"object"}`)}}
}
func (echoPlugins) Start(string) error { return nil }
func (echoPlugins) Call(_ context.Context, _ caller.Caller, _ string, _ []byte, cc *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error) {
	return &aimemoryv1.CallResponse{Text: []byte("ok " + cc.GetAgentId())}, nil
}

// requireHeader takes the principal from a test header and refuses
// requests without it.
type requireHeader struct{}

func (requireHeader) Authenticate(r *http.Request) (Principal, error) {
	id := r.Header.Get("X-Test-Principal")
	if id == "" {
		return Principal{}, &AuthError{Status: http.StatusUnauthorized, Msg: "authentication required"}
	}
	return Principal{ID: id, Namespaces: []string{id}, Attestation: AttestToken}, nil
}

// auditSink records audit entries.
type auditSink struct {
	mu      sync.Mutex
	entries []mcphost.AuditEntry
}

func (a *auditSink) Record(_ context.Context, e mcphost.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

func (a *auditSink) all() []mcphost.AuditEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]mcphost.AuditEntry(nil), a.entries...)
}

// lockedBuffer is a log sink tests read while the front writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testFront struct {
	*Front
	addr, url string
	logs      *lockedBuffer
	audit     *auditSink
	hosts     atomic.Int32 // hosts built
}

// startFront serves opts (with echo plugins, a log and an audit sink) on a
// loopback port until the test ends.
func startFront(t *testing.T, opts Options) *testFront {
	t.Helper()
	tf := &testFront{logs: &lockedBuffer{}, audit: &auditSink{}}
	profile, err := catalog.ParseProfile("core", testSet)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	close(ready)
	opts.Logger = slog.New(slog.NewTextHandler(tf.logs, nil))
	opts.Audit = tf.audit
	opts.NewHost = func(p Principal) *mcphost.Host {
		tf.hosts.Add(1)
		return mcphost.New(mcphost.Options{Profile: profile, AgentID: p.ID, Plugins: echoPlugins{}, EngineReady: ready,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}
	tf.Front = New(opts)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { tf.Serve(ctx, l, time.Second); close(served) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, served, "Serve to return") })
	tf.addr = l.Addr().String()
	tf.url = "http://" + tf.addr + "/mcp"
	return tf
}

const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"%s","version":"1"}}}`

// post sends one request on a fresh connection.
func (tf *testFront) post(t *testing.T, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, tf.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	req.Close = true
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// initialize opens a session of principal (none: unauthenticated) for client.
func (tf *testFront) initialize(t *testing.T, principal, client string) string {
	t.Helper()
	code, h, body := tf.post(t, fmt.Sprintf(initMsg, client), "X-Test-Principal", principal)
	if code != 200 || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	return h.Get("Mcp-Session-Id")
}

// ping reports the status of a ping in session sid.
func (tf *testFront) ping(t *testing.T, principal, sid string) int {
	t.Helper()
	code, _, _ := tf.post(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "X-Test-Principal", principal, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-06-18")
	return code
}

// raw opens a connection and writes s.
func (tf *testFront) raw(t *testing.T, s string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", tf.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
	return c
}

// answerThenClose reads the response on c and waits (at most the generous
// bound) for the server to close the connection; it returns the response,
// its body and how long the close took from start.
func answerThenClose(t *testing.T, c net.Conn, start time.Time, bound time.Duration) (*http.Response, string, time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(bound))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if _, err := br.ReadByte(); err != io.EOF && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("the server did not close the connection within %v: %v", bound, err)
	}
	return resp, string(body), time.Since(start)
}

func isReset(err error) bool { return err != nil && strings.Contains(err.Error(), "connection reset") }

// A POST that declares a body and stalls is answered and closed once
// --read-timeout has passed, whether the request would have been
// authenticated or not; one half-closed mid-body is answered at once.
func TestStalledBodyIsClosed(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	tf := startFront(t, Options{Auth: requireHeader{}, ReadTimeout: readTimeout})
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
	for _, tc := range []struct {
		name, header string
		status       int
	}{
		{"authenticated", "X-Test-Principal: alice\r\n", http.StatusBadRequest},
		{"without credentials", "", http.StatusUnauthorized},
	} {
		start := time.Now()
		c := tf.raw(t, head+tc.header+"\r\n"+`{"jsonrpc"`)
		resp, body, took := answerThenClose(t, c, start, 10*time.Second)
		if resp.StatusCode != tc.status || !resp.Close {
			t.Errorf("%s: %d close=%v %s", tc.name, resp.StatusCode, resp.Close, body)
		}
		t.Logf("%s: %d, closed after %v (read timeout %v)", tc.name, resp.StatusCode, took.Round(time.Millisecond), readTimeout)
	}
	// Half-closed mid-body: the body ends short, which is answered at once.
	c := tf.raw(t, head+"X-Test-Principal: alice\r\n\r\n"+`{"jsonrpc"`)
	c.(*net.TCPConn).CloseWrite()
	resp, body, _ := answerThenClose(t, c, time.Now(), 10*time.Second)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "reading the request body") {
		t.Errorf("half-closed: %d %s", resp.StatusCode, body)
	}
	// The audit queue drains asynchronously.
	waitFor(t, "three refusals audited", func() bool { return len(tf.audit.all()) >= 3 })
}

// A request with both Content-Length and Transfer-Encoding is refused and
// its connection closed; chunked alone is served.
func TestContentLengthWithChunkedIsRefused(t *testing.T) {
	tf := startFront(t, Options{Auth: requireHeader{}})
	init := fmt.Sprintf(initMsg, "raw")
	chunk := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(init), init)
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nX-Test-Principal: alice\r\n"
	c := tf.raw(t, head+"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk)
	resp, body, _ := answerThenClose(t, c, time.Now(), 10*time.Second)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "both Content-Length and Transfer-Encoding") {
		t.Errorf("CL+TE: %d %s", resp.StatusCode, body)
	}
	// The same request after a well-formed one on a keep-alive connection.
	c = tf.raw(t, head+"Transfer-Encoding: chunked\r\n\r\n"+chunk)
	c.SetReadDeadline(time.Now().Add(testwait.Deadline))
	br := bufio.NewReader(c)
	first, err := http.ReadResponse(br, nil)
	if err != nil || first.StatusCode != 200 {
		t.Fatalf("chunked alone: %v %v", first, err)
	}
	io.Copy(io.Discard, first.Body)
	io.WriteString(c, head+"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk)
	second, err := http.ReadResponse(br, nil)
	if err != nil || second.StatusCode != http.StatusBadRequest {
		t.Fatalf("CL+TE after a good request: %v %v", second, err)
	}
	waitFor(t, "the framing refusal audited", func() bool {
		for _, e := range tf.audit.all() {
			if strings.Contains(e.Reason, "400 framing") {
				return true
			}
		}
		return false
	})
}

// The server's own origin counts only with its own scheme.
func TestOriginNeedsTheServersScheme(t *testing.T) {
	tf := startFront(t, Options{Auth: requireHeader{}})
	if code, _, body := tf.post(t, fmt.Sprintf(initMsg, "x"), "X-Test-Principal", "alice", "Origin", "https://"+tf.addr); code != http.StatusForbidden || !strings.Contains(body, "Origin") {
		t.Errorf("https Origin on http: %d %s", code, body)
	}
	if code, _, body := tf.post(t, fmt.Sprintf(initMsg, "x"), "X-Test-Principal", "alice", "Origin", "http://"+tf.addr); code != 200 {
		t.Errorf("own Origin: %d %s", code, body)
	}
}

// Connections beyond the bound wait until one closes.
func TestConnectionBound(t *testing.T) {
	tf := startFront(t, Options{Auth: requireHeader{}, MaxConnections: 2})
	first := tf.raw(t, "")
	tf.raw(t, "")
	waitFor(t, "two connections accepted", func() bool { return tf.Stats().Connections == 2 })
	third := tf.raw(t, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nX-Test-Principal: alice\r\nContent-Length: "+
		fmt.Sprint(len(fmt.Sprintf(initMsg, "x")))+"\r\n\r\n"+fmt.Sprintf(initMsg, "x"))
	waitFor(t, "the bound to be reached", func() bool { return strings.Contains(tf.logs.String(), "connection bound reached") })
	if n := tf.Stats().Connections; n != 2 {
		t.Fatalf("%d connections open, bound 2", n)
	}
	first.Close()
	third.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the waiting connection: %v %v", resp, err)
	}
}

// A principal holds at most MaxSessions sessions: the oldest idle ones
// end; only issued ids of its own are valid.
func TestSessionsPerPrincipalAreBounded(t *testing.T) {
	tf := startFront(t, Options{Auth: requireHeader{}, MaxSessions: 3})
	var alice []string
	for i := range 10 {
		alice = append(alice, tf.initialize(t, "alice", fmt.Sprint("c", i)))
	}
	bob := tf.initialize(t, "bob", "c")
	if st := tf.Stats(); st.Sessions != 4 || st.Principals != 2 {
		t.Errorf("stats %+v, want 4 sessions of 2 principals", st)
	}
	for i, sid := range alice {
		want := http.StatusNotFound
		if i >= 7 {
			want = http.StatusOK
		}
		if code := tf.ping(t, "alice", sid); code != want {
			t.Errorf("alice's session %d: %d, want %d", i, code, want)
		}
	}
	if code := tf.ping(t, "bob", alice[9]); code != http.StatusNotFound {
		t.Errorf("bob in alice's session: %d", code)
	}
	if code := tf.ping(t, "bob", bob); code != http.StatusOK {
		t.Errorf("bob's own session: %d", code)
	}
}

// An idle session ends, then its principal's idle host is dropped; the
// next request builds a new one.
func TestIdleSessionsAndHostsEnd(t *testing.T) {
	tf := startFront(t, Options{Auth: requireHeader{}, SessionIdle: 200 * time.Millisecond, HostIdle: 200 * time.Millisecond})
	sid := tf.initialize(t, "alice", "c")
	waitFor(t, "the session and the host to be dropped", func() bool { return tf.Stats() == Stats{} })
	if code := tf.ping(t, "alice", sid); code != http.StatusNotFound {
		t.Errorf("an expired session: %d", code)
	}
	tf.initialize(t, "alice", "c")
	if n := tf.hosts.Load(); n != 2 {
		t.Errorf("%d hosts built, want 2", n)
	}
}

// Refusals are audited one by one up to the per-source limit; the rest are
// summed up when the window rolls.
func TestRefusalsAreAuditedWithinLimits(t *testing.T) {
	tf := startFront(t, Options{Auth: requireHeader{}})
	for range refusalPerSource + 5 {
		if code, _, _ := tf.post(t, "{}", "Host", "evil.example"); code != http.StatusForbidden {
			t.Fatalf("foreign Host: %d", code)
		}
	}
	tf.refusals.roll()
	waitFor(t, "the summary", func() bool {
		all := tf.audit.all()
		return len(all) > 0 && strings.Contains(all[len(all)-1].Reason, "5 more refusals")
	})
	all := tf.audit.all()
	if len(all) != refusalPerSource+1 || all[0].Event != RefusedEvent || !strings.Contains(all[0].Reason, "403 host from 127.0.0.1") {
		t.Errorf("%d records, first %+v", len(all), all[0])
	}
	if n := strings.Count(tf.logs.String(), "request refused"); n != refusalPerSource {
		t.Errorf("%d refusals logged one by one, want %d", n, refusalPerSource)
	}
}

// Without authentication every session shares one host, and each keeps
// the client name its initialize gave: calls are made for it.
func TestAuthNoneKeepsEachSessionsClientName(t *testing.T) {
	tf := startFront(t, Options{})
	alpha := tf.initialize(t, "", "alpha")
	beta := tf.initialize(t, "", "beta")
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_store","arguments":{}}}`
	for _, tc := range []struct{ sid, want string }{{alpha, "ok ai:alpha"}, {beta, "ok ai:beta"}, {alpha, "ok ai:alpha"}} {
		if code, _, body := tf.post(t, call, "Mcp-Session-Id", tc.sid, "MCP-Protocol-Version", "2025-06-18"); code != 200 || !strings.Contains(body, tc.want) {
			t.Errorf("session %s: %d %s, want %s", tc.sid, code, body, tc.want)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
