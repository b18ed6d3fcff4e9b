// Package httpfront serves the host over MCP Streamable HTTP, safe to
// expose: its own http.Server with the chain Host allow-list → Origin
// allow-list → authentication → per-principal limits → MCP. Each principal
// (with its grant) gets its own mcphost.Host and mcp-go server, so grants,
// expansions, tool lists and the rate limit are the principal's alone; the
// plugins behind them are shared, and every engine call carries the
// per-call assertion the host signs for that principal.
//
// Nothing a client does keeps resources for long: connections are bounded
// server-wide, every body read has a deadline, a principal's sessions are
// bounded and expire when idle, and an idle principal's host is dropped.
// Every refusal is logged and audited, within rate limits.
package httpfront

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ai-memory/ai-memory/internal/apitoken"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/metrics"
	"github.com/ai-memory/ai-memory/sdk"
)

// Principal is who a request is for, as authentication established it.
type Principal struct {
	ID       string   // the session identity; "" = unauthenticated loopback
	Families []string // families the credential grants; nil = the allowlist decides
	// Namespaces is the grant, never empty: "*" alone for every
	// namespace, else namespaces with those below them, "=ns" for ns alone
	// (apitoken.ValidateNamespaces).
	Namespaces  []string
	Attestation string // "" (none), token, oauth, mtls
}

// key tells apart principals with different grants: each gets its own host.
func (p Principal) key() string {
	return p.ID + "\x00" + strings.Join(p.Families, ",") + "\x00" + strings.Join(p.Namespaces, " ") + "\x00" + p.Attestation
}

// Authenticator establishes the principal of a request.
type Authenticator interface {
	// Authenticate returns the principal, or an *AuthError.
	Authenticate(r *http.Request) (Principal, error)
}

// AuthError is a refused credential: Status 401 (missing or invalid) or 403
// (insufficient scope, a malformed grant), with the WWW-Authenticate
// challenge to send, and the principal when the credential proved it.
type AuthError struct {
	Status    int
	Challenge string
	Msg       string
	Principal string
}

func (e *AuthError) Error() string { return e.Msg }

// Options configure a Front.
type Options struct {
	// Hosts is the Host allow-list (names, matched without the port,
	// case-insensitively). Loopback names are always allowed.
	Hosts []string
	// Origins is the Origin allow-list (scheme://host[:port]); a request
	// with any other Origin header is refused with 403.
	Origins []string
	// Auth nil serves without authentication (loopback only; the caller
	// checks the bind).
	Auth Authenticator
	// NewHost builds the host of a principal (called once per principal key).
	NewHost func(Principal) *mcphost.Host
	// MaxBodyBytes bounds a request body (a 413 with a JSON-RPC error above).
	MaxBodyBytes int64
	// MaxConcurrent bounds a principal's requests in flight (a request
	// waits up to QueueWait for a slot, then gets 429) and, separately, its
	// open GET streams (429 at once).
	MaxConcurrent int
	QueueWait     time.Duration
	// ReadTimeout bounds reading a request's body, from the end of its
	// headers (30 s if zero); WriteTimeout bounds a POST's answer (GET
	// streams are long-lived and kept alive by heartbeats); IdleTimeout
	// closes idle keep-alive connections.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections bounds the connections open at once (1,024 if zero);
	// more wait in the listen backlog until one closes.
	MaxConnections int
	// MaxSessions bounds a principal's MCP sessions (64 if zero): a new one
	// ends the least recently used idle one. SessionIdle ends a session
	// unused that long (30 min); HostIdle drops a principal's host once it
	// has had no session and no request for that long (10 min).
	MaxSessions           int
	SessionIdle, HostIdle time.Duration
	// Audit records refusals (rate-limited); nil logs them only.
	Audit mcphost.Auditor
	// Metrics counts refusals by kind; nil counts nothing.
	Metrics *metrics.Host
	// Heartbeat is the interval of SSE keep-alives on streams.
	Heartbeat time.Duration
	// Extra serves other paths (the OAuth protected-resource metadata)
	// before authentication; the Host and Origin checks still apply.
	Extra map[string]http.Handler
	// Path is the MCP endpoint.
	Path   string
	TLS    *tls.Config
	Logger *slog.Logger
}

// Front is the HTTP transport of the host.
type Front struct {
	opts Options
	log  *slog.Logger
	srv  *http.Server

	refusals   *refusals
	listener   atomic.Pointer[limitListener]
	fullLogged atomic.Int64 // when the connection bound was last logged

	mu      sync.Mutex
	tenants map[string]*tenant
}

// tenant is one principal's host, its MCP handler, its sessions and its
// request slots.
type tenant struct {
	host     *mcphost.Host
	handler  *server.StreamableHTTPServer
	sessions *sessions
	slots    chan struct{} // requests in flight
	streams  chan struct{} // GET streams open

	// Guarded by Front.mu: requests being served, and when the last ended.
	active  int
	lastUse time.Time
}

// New builds a Front; Serve runs it.
func New(opts Options) *Front {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Path == "" {
		opts.Path = "/mcp"
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = mcphost.DefaultMaxMessageBytes
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 32
	}
	if opts.QueueWait <= 0 {
		opts.QueueWait = 10 * time.Second
	}
	opts.ReadTimeout = cmp.Or(opts.ReadTimeout, 30*time.Second)
	opts.MaxConnections = cmp.Or(opts.MaxConnections, 1024)
	opts.MaxSessions = cmp.Or(opts.MaxSessions, 64)
	opts.SessionIdle = cmp.Or(opts.SessionIdle, 30*time.Minute)
	opts.HostIdle = cmp.Or(opts.HostIdle, 10*time.Minute)
	f := &Front{opts: opts, log: opts.Logger, tenants: map[string]*tenant{}, refusals: newRefusals(opts.Logger, opts.Audit, opts.Metrics)}
	f.srv = &http.Server{
		Handler:           f,
		TLSConfig:         opts.TLS,
		ReadHeaderTimeout: 10 * time.Second,
		// Not ReadTimeout: its deadline outlives the body, and the server's
		// background read hitting it cancels the request's context, which
		// would end streams and long calls. ServeHTTP bounds the body instead.
		IdleTimeout:    opts.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
	}
	return f
}

// Serve answers on l until ctx ends, then shuts down gracefully: the
// listener closes (new connections are refused), calls in flight finish
// (for at most grace), then the rest is closed.
func (f *Front) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	// Plain HTTP connections are followed for smuggled framing; over TLS
	// the listener sees ciphertext, and nothing between client and server
	// parses the requests anyway.
	ll := newLimitListener(l, f.opts.MaxConnections, f.opts.TLS == nil, f.connectionsFull)
	f.listener.Store(ll)
	bg, stop := context.WithCancel(context.Background())
	audited := make(chan struct{})
	defer func() { stop(); <-audited }() // the refusals queued are audited before the engine goes
	go func() { f.refusals.run(bg); close(audited) }()
	go f.janitor(bg)
	errc := make(chan error, 1)
	go func() {
		if f.opts.TLS != nil {
			errc <- f.srv.ServeTLS(ll, "", "")
		} else {
			errc <- f.srv.Serve(ll)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := f.srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		f.log.Warn("stopping with requests still running (streams or slow calls)", "after", grace)
		err = f.srv.Close()
	}
	return err
}

// ServeHTTP is the chain.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every body read has a deadline, until a body has been read to its end
	// (post lifts it then): whatever is left unread of a refused request is
	// discarded by the server under it too, then the connection closes.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(f.opts.ReadTimeout))
	if c := connOf(r.Context()); c != nil && c.bad.Load() {
		f.refuse(w, r, Principal{}, http.StatusBadRequest, "framing", "a request with both Content-Length and Transfer-Encoding is refused (its length is ambiguous); send one of them")
		return
	}
	if !f.hostAllowed(r.Host) {
		f.refuse(w, r, Principal{}, http.StatusForbidden, "host", fmt.Sprintf("Host %s is not allowed (serve --allowed-host)", quote(r.Host)))
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !f.originAllowed(o, r) {
		f.refuse(w, r, Principal{}, http.StatusForbidden, "origin", fmt.Sprintf("Origin %s is not allowed (serve --allowed-origin)", quote(o)))
		return
	}
	if h, ok := f.opts.Extra[r.URL.Path]; ok {
		h.ServeHTTP(w, r)
		return
	}
	if r.URL.Path != f.opts.Path {
		http.NotFound(w, r)
		return
	}
	if r.URL.Query().Has("access_token") {
		f.refuse(w, r, Principal{}, http.StatusBadRequest, "query_token", "a token in the query string is refused; send it in the Authorization header")
		return
	}
	p := Principal{Namespaces: []string{apitoken.AllNamespaces}} // --auth none: the local user
	if f.opts.Auth != nil {
		var err error
		if p, err = f.opts.Auth.Authenticate(r); err != nil {
			var ae *AuthError
			if !errors.As(err, &ae) {
				ae = &AuthError{Status: http.StatusUnauthorized, Msg: err.Error()}
			}
			if ae.Challenge != "" {
				w.Header().Set("WWW-Authenticate", ae.Challenge)
			}
			f.refuse(w, r, Principal{ID: ae.Principal}, ae.Status, "auth", ae.Msg)
			return
		}
	}
	if r.Method != http.MethodPost && (r.ContentLength != 0 || len(r.TransferEncoding) > 0) {
		f.refuse(w, r, p, http.StatusBadRequest, "body", r.Method+" requests carry no body")
		return
	}
	t := f.enter(p)
	defer f.leave(t)
	sid := r.Header.Get(server.HeaderKeySessionID)
	client, known := "", false
	if sid != "" {
		if client, known = t.sessions.enter(sid); known {
			defer t.sessions.leave(sid)
		}
	}
	switch r.Method {
	case http.MethodPost:
		f.post(w, r, p, t, client, sid == "" || known)
	case http.MethodGet:
		rc.SetReadDeadline(time.Time{}) // no body; a stream's connection stays open
		// A stream holds its slot for as long as it is open; beyond the
		// cap a principal's new stream is refused at once.
		select {
		case t.streams <- struct{}{}:
			defer func() { <-t.streams }()
		default:
			w.Header().Set("Retry-After", "5")
			f.refuse(w, r, p, http.StatusTooManyRequests, "streams", fmt.Sprintf("too many open streams for this principal (at most %d)", f.opts.MaxConcurrent))
			return
		}
		if sid != "" && !known {
			http.Error(w, "Invalid session ID", http.StatusNotFound) // as mcp-go answers a POST
			return
		}
		t.handler.ServeHTTP(w, r)
	default:
		t.handler.ServeHTTP(w, r) // DELETE session, HEAD, or mcp-go's 404/405
	}
}

// post reads the body, takes a slot, and answers: the host itself for the
// calls it answers (an unloaded family's tool names the family), mcp-go
// for the rest. The writer is passed on unwrapped, so SSE keeps Flush.
// direct is false when the request names a session this principal does
// not hold, which mcp-go refuses.
func (f *Front) post(w http.ResponseWriter, r *http.Request, p Principal, t *tenant, client string, direct bool) {
	limit := f.opts.MaxBodyBytes
	if r.ContentLength > limit {
		f.tooLarge(w, r, p, r.ContentLength)
		return
	}
	rc := http.NewResponseController(w)
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		f.refuse(w, r, p, http.StatusBadRequest, "body", fmt.Sprintf("reading the request body: it did not arrive within %s (serve --read-timeout)", f.opts.ReadTimeout))
		return
	case errors.Is(err, io.ErrUnexpectedEOF):
		f.refuse(w, r, p, http.StatusBadRequest, "body", "reading the request body: it ended before its declared length")
		return
	case err != nil:
		f.refuse(w, r, p, http.StatusBadRequest, "body", "reading the request body: "+err.Error())
		return
	}
	if int64(len(body)) > limit {
		f.tooLarge(w, r, p, -1)
		return
	}
	// Read to its end: lifting the deadline now lets the server watch the
	// connection for the client going away during a long call.
	rc.SetReadDeadline(time.Time{})
	if !f.acquire(r.Context(), t) {
		w.Header().Set("Retry-After", "1")
		f.refuse(w, r, p, http.StatusTooManyRequests, "busy", fmt.Sprintf("too many requests in flight for this principal (at most %d)", f.opts.MaxConcurrent))
		return
	}
	defer func() { <-t.slots }()
	if f.opts.WriteTimeout > 0 {
		rc.SetWriteDeadline(time.Now().Add(f.opts.WriteTimeout))
	}
	ctx := r.Context()
	if client != "" {
		ctx = mcphost.WithClientName(ctx, client)
	}
	if direct && isJSON(r) {
		if msg, ok := t.host.AnswerCall(ctx, body); ok {
			writeJSON(w, http.StatusOK, msg)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	// A tools/list answer is reported once written, so an expansion
	// waiting for this client's new list answers after it (mcphost/relist.go).
	listing := mcphost.IsToolsList(body)
	version := t.host.ToolsVersion()
	t.handler.ServeHTTP(w, r)
	if listing && rc.Flush() == nil {
		t.host.ListAnswered(r.Header.Get(server.HeaderKeySessionID), version)
	}
	if sid := w.Header().Get(server.HeaderKeySessionID); sid != "" {
		t.sessions.named(sid, initializeClient(body))
	}
}

// initializeClient is the client name an initialize message gives.
func initializeClient(body []byte) string {
	var msg struct {
		Params struct {
			ClientInfo struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
		} `json:"params"`
	}
	json.Unmarshal(body, &msg)
	return msg.Params.ClientInfo.Name
}

func isJSON(r *http.Request) bool {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "application/json")
}

func (f *Front) acquire(ctx context.Context, t *tenant) bool {
	select {
	case t.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(f.opts.QueueWait)
	defer timer.Stop()
	select {
	case t.slots <- struct{}{}:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// enter returns the principal's tenant, building it on first use, with
// one more request counted as being served (so it is not dropped meanwhile).
func (f *Front) enter(p Principal) *tenant {
	k := p.key()
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tenants[k]
	if !ok {
		t = f.newTenant(p)
		f.tenants[k] = t
	}
	t.active++
	return t
}

// leave ends what enter began.
func (f *Front) leave(t *tenant) {
	f.mu.Lock()
	t.active--
	t.lastUse = time.Now()
	f.mu.Unlock()
}

func (f *Front) newTenant(p Principal) *tenant {
	h := f.opts.NewHost(p)
	t := &tenant{host: h, sessions: newSessions(f.opts.MaxSessions, time.Now),
		slots: make(chan struct{}, f.opts.MaxConcurrent), streams: make(chan struct{}, f.opts.MaxConcurrent)}
	opts := []server.StreamableHTTPOption{
		server.WithDisableLocalhostProtection(true), // the Host allow-list above covers every bind
		server.WithStreamableHTTPLogger(f.log),
		server.WithSessionIdManager(t.sessions), // the front ends idle sessions (janitor)
	}
	if f.opts.Heartbeat > 0 {
		opts = append(opts, server.WithHeartbeatInterval(f.opts.Heartbeat))
	}
	t.handler = server.NewStreamableHTTPServer(h.Server(), opts...)
	t.sessions.end = func(id string) { endSession(t.handler, id) }
	return t
}

// janitor ends idle sessions, drops idle principals' hosts and rolls the
// refusal window, until ctx ends.
func (f *Front) janitor(ctx context.Context) {
	tick := time.NewTicker(min(max(min(f.opts.SessionIdle, f.opts.HostIdle)/4, 100*time.Millisecond), refusalWindow))
	defer tick.Stop()
	lastRoll := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			f.sweep(now)
			if now.Sub(lastRoll) >= refusalWindow {
				f.refusals.roll()
				lastRoll = now
			}
		}
	}
}

// sweep ends the sessions idle for SessionIdle and drops the hosts of
// principals with no session and no request for HostIdle.
func (f *Front) sweep(now time.Time) {
	f.mu.Lock()
	all := make([]*tenant, 0, len(f.tenants))
	for _, t := range f.tenants {
		all = append(all, t)
	}
	f.mu.Unlock()
	for _, t := range all {
		t.sessions.expire(now.Add(-f.opts.SessionIdle))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, t := range f.tenants {
		// A session is only created within a request, which active counts.
		if t.active == 0 && now.Sub(t.lastUse) >= f.opts.HostIdle && t.sessions.len() == 0 {
			delete(f.tenants, k)
		}
	}
}

// Stats is what the front holds now.
type Stats struct {
	Connections, Principals, Sessions int
}

// Stats counts the open connections, the principals with a host and their
// sessions.
func (f *Front) Stats() Stats {
	var s Stats
	if l := f.listener.Load(); l != nil {
		s.Connections = l.open()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s.Principals = len(f.tenants)
	for _, t := range f.tenants {
		s.Sessions += t.sessions.len()
	}
	return s
}

// Tenants is the number of principals with a host now.
func (f *Front) Tenants() int { return f.Stats().Principals }

// connectionsFull logs that the connection bound was reached, at most once
// a minute.
func (f *Front) connectionsFull(n int) {
	now := time.Now().UnixNano()
	if last := f.fullLogged.Load(); now-last < int64(time.Minute) || !f.fullLogged.CompareAndSwap(last, now) {
		return
	}
	f.log.Warn("connection bound reached: new connections wait until one closes (serve --max-connections)", "max", n)
}

func (f *Front) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" || host == "127.0.0.1" || host == "::1" {
		return true
	}
	return slices.ContainsFunc(f.opts.Hosts, func(a string) bool { return strings.EqualFold(a, host) })
}

// originAllowed: the allow-list, or the request's own origin (an Origin
// naming the scheme and Host it was sent to, which passed the Host
// allow-list, is the server's own page, not a cross-site one; an https
// page is not the origin of an http server).
func (f *Front) originAllowed(origin string, r *http.Request) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if u, err := url.Parse(origin); err == nil && u.Host != "" && u.Scheme == scheme && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return slices.ContainsFunc(f.opts.Origins, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "/"), origin) })
}

func (f *Front) tooLarge(w http.ResponseWriter, r *http.Request, p Principal, size int64) {
	limit := f.opts.MaxBodyBytes
	msg := fmt.Sprintf("message of %d bytes is over the limit of %d bytes ([mcp] max_message_bytes in config.toml); it was not read", size, limit)
	data := map[string]any{"limit": limit}
	if size < 0 {
		msg = fmt.Sprintf("message is over the limit of %d bytes ([mcp] max_message_bytes in config.toml); it was not read", limit)
	} else {
		data["size"] = size
	}
	f.refuseWith(w, r, p, http.StatusRequestEntityTooLarge, "too_large", msg, data)
}

// refuse answers a transport-level refusal as a JSON-RPC error body, which
// MCP clients show, with the HTTP status that says what happened; it logs
// and audits it (rate-limited) and closes the connection.
func (f *Front) refuse(w http.ResponseWriter, r *http.Request, p Principal, status int, kind, msg string) {
	f.refuseWith(w, r, p, status, kind, msg, nil)
}

func (f *Front) refuseWith(w http.ResponseWriter, r *http.Request, p Principal, status int, kind, msg string, data any) {
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	f.refusals.record(refusal{status: status, kind: kind, principal: p, addr: addr, msg: msg})
	w.Header().Set("Connection", "close")
	writeJSON(w, status, mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION,
		Error: mcp.JSONRPCErrorDetails{Code: mcp.INVALID_REQUEST, Message: msg, Data: data}})
}

func writeJSON(w http.ResponseWriter, status int, msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

func quote(s string) string { return sdk.Quote(s) }
