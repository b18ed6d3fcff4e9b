package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
	"github.com/ai-memory/ai-memory/sdk/procstat"
)

// addr is the server's host:port.
func (s *served) addr() string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s.url, "http://"), "https://"), "/mcp")
}

// clientConns counts the connections the server process holds on its
// port (accepted ones, not those waiting in the listen backlog).
func (s *served) clientConns() int {
	_, port, _ := net.SplitHostPort(s.addr())
	p, _ := strconv.Atoi(port)
	local := fmt.Sprintf(":%04X ", p)
	onPort := map[string]bool{} // socket inodes of connections on the port
	for _, table := range []string{"tcp", "tcp6"} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", s.cmd.Process.Pid, table))
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 9 && strings.HasSuffix(f[1]+" ", local) && f[3] != "0A" { // 0A: listening
				onPort[f[9]] = true
			}
		}
	}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", s.cmd.Process.Pid))
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && onPort[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] {
			n++
		}
	}
	return n
}

// dial opens a raw connection to the server and writes s.
func (s *served) dial(t *testing.T, msg string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	return c
}

// rawPost is a POST of body to /mcp as raw bytes, with extra header lines.
func rawPost(body string, header ...string) string {
	h := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	for _, l := range header {
		h += l + "\r\n"
	}
	return h + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// untilClosed reads whatever the server sends on c until it closes the
// connection (at most bound); it returns what was read and when.
func untilClosed(c net.Conn, bound time.Duration) (string, time.Duration, error) {
	start := time.Now()
	c.SetReadDeadline(start.Add(bound))
	b, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return string(b), time.Since(start), fmt.Errorf("still open after %v", bound)
	}
	return string(b), time.Since(start), nil // EOF or reset: closed by the server
}

// Slow and half-open clients are answered and closed: a body that stalls
// once --read-timeout has passed (with or without a key), headers that
// never end and a connection that says nothing once the header timeout
// (10 s) has. Meanwhile the server serves everyone else.
func TestHTTPSlowClientsAreClosed(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	const readTimeout = 2 * time.Second
	s := e.serve("--read-timeout", readTimeout.String())
	stalled := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
	cases := []struct {
		name, send, status string
		bound              time.Duration
	}{
		{"stalled body with a key", stalled + "Authorization: Bearer " + key + "\r\n\r\n" + `{"jsonrpc"`, "400 Bad Request", readTimeout + 10*time.Second},
		{"stalled body without a key", stalled + "\r\n" + `{"jsonrpc"`, "401 Unauthorized", readTimeout + 10*time.Second},
		{"headers never ended", "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", "", 30 * time.Second}, // closed unanswered
		{"nothing sent", "", "", 30 * time.Second},
	}
	var wg sync.WaitGroup
	for _, tc := range cases {
		c := s.dial(t, tc.send)
		wg.Go(func() {
			got, took, err := untilClosed(c, tc.bound)
			answered := got != "" && strings.HasPrefix(got, "HTTP/1.1 "+tc.status)
			if err != nil || answered != (tc.status != "") {
				t.Errorf("%s: %v, answered %.120q", tc.name, err, got)
				return
			}
			t.Logf("%s: closed by the server after %v", tc.name, took.Round(10*time.Millisecond))
		})
	}
	alice := s.connect(key, nil)
	alice.ok("memory_store", map[string]any{"title": "still served", "content": "while slow clients wait", "namespace": "alice"})
	wg.Wait()
}

// 11,000 sessions opened by one key leave at most --max-sessions (64)
// alive: the oldest idle ones end, and the server's memory stays flat.
func TestHTTPManySessionsFromOneKey(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	s := e.serve()
	pid := s.cmd.Process.Pid
	const attempts, workers = 11000, 8
	ids := make([]string, attempts)
	open := func(from, to int) {
		var wg sync.WaitGroup
		var next atomic.Int64
		next.Store(int64(from))
		for range workers {
			wg.Go(func() {
				hc := &http.Client{Timeout: testwait.Deadline, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
				defer hc.CloseIdleConnections()
				for i := int(next.Add(1) - 1); i < to; i = int(next.Add(1) - 1) {
					r, err := s.tryPost(hc, initBody, bearerHeader(key))
					if err != nil || r.status != 200 {
						t.Errorf("initialize %d: %v %d %s", i, err, r.status, r.body)
						return
					}
					ids[i] = r.header.Get("Mcp-Session-Id")
				}
			})
		}
		wg.Wait()
	}
	open(0, 200) // the principal's host exists and the allocator is warm
	before := procstat.RSS(pid)
	start := time.Now()
	open(200, attempts)
	took := time.Since(start)
	after := procstat.RSS(pid)

	var live atomic.Int64
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Go(func() {
			hc := &http.Client{Timeout: testwait.Deadline, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer hc.CloseIdleConnections()
			for i := int(next.Add(1) - 1); i < attempts; i = int(next.Add(1) - 1) {
				h := bearerHeader(key)
				h["Mcp-Session-Id"], h["MCP-Protocol-Version"] = ids[i], "2025-06-18"
				r, err := s.tryPost(hc, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, h)
				switch {
				case err == nil && r.status == 200:
					live.Add(1)
				case err == nil && r.status == 404:
				default:
					t.Errorf("ping %d: %v %d %s", i, err, r.status, r.body)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d session attempts from one key in %v: %d sessions live; RSS %.1f MB before, %.1f MB after (%+.1f MB); %d client connections open",
		attempts-200, took.Round(time.Millisecond), live.Load(), mb(before), mb(after), mb(after-before), s.clientConns())
	if live.Load() != 64 {
		t.Errorf("%d sessions live, want the bound, 64", live.Load())
	}
	if before == 0 || after-before > 20<<20 {
		t.Errorf("RSS grew from %.1f MB to %.1f MB, over +20 MB", mb(before), mb(after))
	}
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// Connections beyond --max-connections wait until one closes; the server
// holds no more than the bound (and the one its accept loop holds).
func TestHTTPConnectionBound(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	const bound, extra = 40, 20
	s := e.serve("--max-connections", fmt.Sprint(bound))
	answered := make(chan int, bound+extra)
	conns := make([]net.Conn, bound+extra)
	for i := range conns {
		conns[i] = s.dial(t, rawPost(initBody, "Authorization: Bearer "+key))
		go func() {
			conns[i].SetReadDeadline(time.Now().Add(60 * time.Second))
			if resp, err := http.ReadResponse(bufio.NewReader(conns[i]), nil); err == nil && resp.StatusCode == 200 {
				answered <- i
			}
		}()
	}
	first := map[int]bool{}
	for len(first) < bound {
		select {
		case i := <-answered:
			first[i] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d connections answered", len(first), bound)
		}
	}
	eventually(t, 10*time.Second, "the bound to be logged", func() bool { return strings.Contains(s.stderr.String(), "connection bound reached") })
	held := s.clientConns()
	t.Logf("at the bound of %d, %d clients connected: %d answered, %d connections held by the server (the bound, and one its accept loop holds)", bound, bound+extra, len(first), held)
	if held > bound+1 {
		t.Errorf("%d connections held, bound %d", held, bound)
	}
	closed := 0
	for i := range first {
		if closed == extra {
			break
		}
		conns[i].Close()
		closed++
	}
	for n := 0; n < extra; n++ {
		select {
		case i := <-answered:
			if first[i] {
				t.Fatalf("connection %d answered twice", i)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of the %d waiting connections answered after %d closed", n, extra, extra)
		}
	}
}

// Each kind of refusal at the front is in the audit log, with the
// principal where it is known; refusals beyond the per-source limit are
// summed up instead.
func TestHTTPRefusalsAreAudited(t *testing.T) {
	e := newEnv(t)
	key := e.token("alice")
	s := e.serve("--max-concurrent", "1")
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer " + key, "Host": "evil.example"}); r.status != 403 {
		t.Errorf("foreign Host: %d", r.status)
	}
	// An https page is not the origin of an http server.
	if r := s.post(nil, initBody, map[string]string{"Authorization": "Bearer " + key, "Origin": "https://" + s.addr()}); r.status != 403 {
		t.Errorf("https Origin: %d %s", r.status, r.body)
	}
	if r := s.post(nil, initBody, nil); r.status != 401 {
		t.Errorf("no key: %d", r.status)
	}
	if r := s.post(nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("a", 2<<20)+`"}}`, bearerHeader(key)); r.status != 413 {
		t.Errorf("2 MB: %d", r.status)
	}
	url := s.url
	s.url += "?access_token=x"
	if r := s.post(nil, initBody, nil); r.status != 400 {
		t.Errorf("query token: %d", r.status)
	}
	s.url = url
	// Both Content-Length and Transfer-Encoding; a body that ends short.
	smuggle := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	if got, _, err := untilClosed(s.dial(t, smuggle), 30*time.Second); err != nil || !strings.HasPrefix(got, "HTTP/1.1 400") || !strings.Contains(got, "Transfer-Encoding") {
		t.Errorf("CL+TE: %v %.200q", err, got)
	}
	short := s.dial(t, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+key+"\r\nContent-Length: 100\r\n\r\n{")
	short.(*net.TCPConn).CloseWrite()
	if got, _, err := untilClosed(short, 30*time.Second); err != nil || !strings.HasPrefix(got, "HTTP/1.1 400") {
		t.Errorf("short body: %v %.200q", err, got)
	}
	// One stream open; a second one for the same principal is 429.
	sid := s.post(nil, initBody, bearerHeader(key)).header.Get("Mcp-Session-Id")
	stream := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, s.url, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := testHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := stream(); r.StatusCode != 200 {
		t.Fatalf("first stream: %d", r.StatusCode)
	}
	if r := stream(); r.StatusCode != 429 {
		t.Errorf("second stream: %d", r.StatusCode)
	}
	// A client that keeps failing fills the log only up to the limit.
	for range 30 {
		s.post(nil, initBody, bearerHeader("aim_nope"))
	}

	// Refusals are logged as they happen and audited soon after: the log
	// says how many records to wait for.
	logged := strings.Count(s.stderr.String(), `msg="request refused"`)
	anonymousLogged := strings.Count(s.stderr.String(), `principal="" from=127.0.0.1`)
	var rows []map[string]any
	eventually(t, 20*time.Second, "the logged refusals in the audit log", func() bool {
		out, code := e.cli("audit", "list", "--json", "--limit", "1000")
		rows = nil
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
			return false
		}
		n := 0
		for _, r := range rows {
			if r["event_type"] == "http_refused" {
				n++
			}
		}
		return n == logged
	})
	if anonymousLogged != 20 { // 35 attempted before a principal was known
		t.Errorf("%d refusals of unknown principals from one address logged and audited one by one, want the limit of 20", anonymousLogged)
	}
	reasons := ""
	for _, r := range rows {
		reason := fmt.Sprint(r["reason"])
		reasons += reason + "\n"
		if strings.Contains(reason, "429 streams") && (r["agent_id"] != "alice" || r["attestation"] != "token") {
			t.Errorf("the 429 does not name alice: %v", r)
		}
	}
	for _, want := range []string{"403 host", "403 origin", "401 auth", "413 too_large", "400 query_token", "400 framing", "400 body", "429 streams"} {
		if !strings.Contains(reasons, want+" from 127.0.0.1") {
			t.Errorf("no %q in the audit log:\n%s", want, reasons)
		}
	}
}

// With --auth none every local session shares one host; each keeps the
// client name it gave, and its writes carry it.
func TestHTTPAuthNoneSessionsKeepTheirNames(t *testing.T) {
	e := newEnv(t)
	s := e.serve("--auth", "none")
	alpha, beta := s.connectAs("", "alpha", nil), s.connectAs("", "beta", nil)
	for _, tc := range []struct {
		h    *host
		want string
	}{{alpha, "ai:alpha"}, {beta, "ai:beta"}, {alpha, "ai:alpha"}} {
		stored := tc.h.ok("memory_store", map[string]any{"title": "by " + tc.want, "content": "who wrote this", "namespace": "shared"})
		got := tc.h.ok("memory_get", map[string]any{"id": stored["id"], "format": "json"})
		if got["created_by"] != tc.want {
			t.Errorf("stored by %s: created_by %v", tc.want, got["created_by"])
		}
	}
}

// One rule checks a grant's namespaces wherever it comes from: token
// create refuses a malformed list, and a stored grant that breaks it (a
// hand-edited token file) refuses the key rather than widening it.
func TestHTTPTokenGrantsFollowOneRule(t *testing.T) {
	e := newEnv(t)
	for _, ns := range []string{"*,team-a", "x y", "team-a/"} {
		if out, code := e.cli("token", "create", "alice", "--namespace", ns); code != 2 || !strings.Contains(out, "--namespace") {
			t.Errorf("token create --namespace %q: exit %d %s", ns, code, out)
		}
	}
	key := e.token("alice", "--namespace", "=team-a")
	s := e.serve()
	c := s.connect(key, nil)
	c.ok("memory_store", map[string]any{"title": "a", "content": "team-a's", "namespace": "team-a"})
	c.fails("memory_store", map[string]any{"title": "a", "content": "x", "namespace": "team-a/sub"}, "outside the namespaces alice may use")

	path := filepath.Join(e.dataDir, "http-tokens.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), `"=team-a"`, `"*", "team-a"`, 1)
	if edited == string(raw) {
		t.Fatalf("no grant to edit in %s", raw)
	}
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := s.post(nil, initBody, bearerHeader(key)); r.status != 403 || !strings.Contains(r.body, "malformed grant") {
		t.Errorf("a stored grant with \"*\" and more: %d %s", r.status, r.body)
	}
}
