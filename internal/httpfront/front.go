// Package httpfront serves the host over MCP Streamable HTTP, safe to
// expose: its own http.Server with the chain Host allow-list → Origin
// allow-list → authentication → per-principal limits → MCP. Each principal
// (with its grant) gets its own mcphost.Host and mcp-go server, so grants,
// expansions, tool lists and the rate limit are the principal's alone; the
// plugins behind them are shared, and every engine call carries the
// per-call assertion the host signs for that principal.
package httpfront

import (
	"bytes"
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/sdk"
)

// Principal is who a request is for, as authentication established it.
type Principal struct {
	ID          string   // the session identity; "" = unauthenticated loopback
	Families    []string // families the credential grants; nil = the allowlist decides
	Namespaces  []string // namespace prefixes it may use; ["*"] = every namespace, none = none
	Attestation string   // "" (none), token, oauth, mtls
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
// (insufficient scope), with the WWW-Authenticate challenge to send.
type AuthError struct {
	Status    int
	Challenge string
	Msg       string
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
	// ReadTimeout bounds reading a POST body; WriteTimeout bounds a POST's
	// answer (GET streams are long-lived and kept alive by heartbeats);
	// IdleTimeout closes idle keep-alive connections.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
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

	mu      sync.Mutex
	tenants map[string]*tenant
}

// tenant is one principal's host, its MCP handler and its request slots.
type tenant struct {
	host    *mcphost.Host
	handler *server.StreamableHTTPServer
	slots   chan struct{} // requests in flight
	streams chan struct{} // GET streams open
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
	f := &Front{opts: opts, log: opts.Logger, tenants: map[string]*tenant{}}
	f.srv = &http.Server{
		Handler:           f,
		TLSConfig:         opts.TLS,
		ReadHeaderTimeout: 10 * time.Second,
		// Not ReadTimeout: its deadline outlives the body, and the server's
		// background read hitting it cancels the request's context, which
		// would end streams and long calls. post bounds the body instead.
		IdleTimeout:    opts.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	return f
}

// Serve answers on l until ctx ends, then shuts down gracefully: the
// listener closes (new connections are refused), calls in flight finish
// (for at most grace), then the rest is closed.
func (f *Front) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() {
		if f.opts.TLS != nil {
			errc <- f.srv.ServeTLS(l, "", "")
		} else {
			errc <- f.srv.Serve(l)
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
	if !f.hostAllowed(r.Host) {
		f.refuse(w, http.StatusForbidden, fmt.Sprintf("Host %s is not allowed (serve --allowed-host)", quote(r.Host)))
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !f.originAllowed(o, r.Host) {
		f.refuse(w, http.StatusForbidden, fmt.Sprintf("Origin %s is not allowed (serve --allowed-origin)", quote(o)))
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
		f.refuse(w, http.StatusBadRequest, "a token in the query string is refused; send it in the Authorization header")
		return
	}
	p := Principal{}
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
			f.refuse(w, ae.Status, ae.Msg)
			return
		}
	}
	t := f.tenant(p)
	switch r.Method {
	case http.MethodPost:
		f.post(w, r, t)
	case http.MethodGet:
		// A stream holds its slot for as long as it is open; beyond the
		// cap a principal's new stream is refused at once.
		select {
		case t.streams <- struct{}{}:
			defer func() { <-t.streams }()
		default:
			w.Header().Set("Retry-After", "5")
			f.refuse(w, http.StatusTooManyRequests, fmt.Sprintf("too many open streams for this principal (at most %d)", f.opts.MaxConcurrent))
			return
		}
		t.handler.ServeHTTP(w, r)
	default:
		t.handler.ServeHTTP(w, r) // DELETE session, HEAD, or mcp-go's 404/405
	}
}

// post bounds the body, takes a slot, and answers: the host itself for the
// calls it answers (an unloaded family's tool names the family), mcp-go
// for the rest. The writer is passed on unwrapped, so SSE keeps Flush.
func (f *Front) post(w http.ResponseWriter, r *http.Request, t *tenant) {
	limit := f.opts.MaxBodyBytes
	if r.ContentLength > limit {
		f.tooLarge(w, r.ContentLength)
		return
	}
	rc := http.NewResponseController(w)
	if f.opts.ReadTimeout > 0 {
		rc.SetReadDeadline(time.Now().Add(f.opts.ReadTimeout))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		f.refuse(w, http.StatusBadRequest, "reading the request body: "+err.Error())
		return
	}
	if int64(len(body)) > limit {
		f.tooLarge(w, -1)
		return
	}
	if !f.acquire(r.Context(), t) {
		w.Header().Set("Retry-After", "1")
		f.refuse(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests in flight for this principal (at most %d)", f.opts.MaxConcurrent))
		return
	}
	defer func() { <-t.slots }()
	if f.opts.WriteTimeout > 0 {
		rc.SetWriteDeadline(time.Now().Add(f.opts.WriteTimeout))
	}
	if isJSON(r) {
		if msg, ok := t.host.AnswerCall(r.Context(), body); ok {
			writeJSON(w, http.StatusOK, msg)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	t.handler.ServeHTTP(w, r)
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

// tenant returns the principal's host, building it on first use.
func (f *Front) tenant(p Principal) *tenant {
	k := p.key()
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.tenants[k]; ok {
		return t
	}
	h := f.opts.NewHost(p)
	opts := []server.StreamableHTTPOption{
		server.WithDisableLocalhostProtection(true), // the Host allow-list above covers every bind
		server.WithStreamableHTTPLogger(f.log),
		server.WithSessionIdleTTL(time.Hour),
	}
	if f.opts.Heartbeat > 0 {
		opts = append(opts, server.WithHeartbeatInterval(f.opts.Heartbeat))
	}
	t := &tenant{host: h, handler: server.NewStreamableHTTPServer(h.Server(), opts...), slots: make(chan struct{}, f.opts.MaxConcurrent),
		streams: make(chan struct{}, f.opts.MaxConcurrent)}
	f.tenants[k] = t
	return t
}

// Tenants is the number of principals served so far.
func (f *Front) Tenants() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.tenants)
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
// naming the Host it was sent to, which passed the Host allow-list, is the
// server's own page, not a cross-site one).
func (f *Front) originAllowed(origin, host string) bool {
	if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, host) {
		return true
	}
	return slices.ContainsFunc(f.opts.Origins, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "/"), origin) })
}

func (f *Front) tooLarge(w http.ResponseWriter, size int64) {
	limit := f.opts.MaxBodyBytes
	msg := fmt.Sprintf("message of %d bytes is over the limit of %d bytes ([mcp] max_message_bytes in config.toml); it was not read", size, limit)
	data := map[string]any{"limit": limit}
	if size < 0 {
		msg = fmt.Sprintf("message is over the limit of %d bytes ([mcp] max_message_bytes in config.toml); it was not read", limit)
	} else {
		data["size"] = size
	}
	writeJSON(w, http.StatusRequestEntityTooLarge, mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION,
		Error: mcp.JSONRPCErrorDetails{Code: mcp.INVALID_REQUEST, Message: msg, Data: data}})
}

// refuse answers a transport-level refusal as a JSON-RPC error body, which
// MCP clients show, with the HTTP status that says what happened.
func (f *Front) refuse(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION,
		Error: mcp.JSONRPCErrorDetails{Code: mcp.INVALID_REQUEST, Message: msg}})
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
