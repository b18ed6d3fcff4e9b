package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/google/uuid"

	"github.com/ai-memory/ai-memory/internal/apitoken"
	"github.com/ai-memory/ai-memory/internal/auditlog"
	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/console"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/guard"
	"github.com/ai-memory/ai-memory/internal/httpfront"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/metrics"
	"github.com/ai-memory/ai-memory/internal/proctune"
	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// DefaultListen is serve's address: loopback only.
const DefaultListen = "127.0.0.1:8420"

type serveCmd struct {
	Listen         string        `help:"Address to listen on (host:port)." default:"127.0.0.1:8420" env:"AI_MEMORY_LISTEN"`
	Auth           string        `help:"Authentication: token (API keys, ai-memory token create), oauth (JWTs of an authorization server), or none (loopback only)." enum:"token,oauth,none" default:"token"`
	AllowedHost    []string      `help:"Host header names clients use (loopback names are always allowed); repeatable." name:"allowed-host"`
	AllowedOrigin  []string      `help:"Origin values a browser client may send (scheme://host[:port]); any other present Origin gets 403; repeatable." name:"allowed-origin"`
	TLSCert        string        `help:"TLS certificate (PEM) to serve HTTPS." type:"path" name:"tls-cert"`
	TLSKey         string        `help:"TLS private key (PEM)." type:"path" name:"tls-key"`
	ClientCA       string        `help:"CA bundle (PEM) that signs client certificates: mTLS binds the principal to the certificate (SPIFFE URI SAN, else subject CN)." type:"path" name:"client-ca"`
	RequireCert    bool          `help:"With --client-ca: refuse connections without a verified client certificate." name:"require-client-cert"`
	CertScope      string        `help:"With --client-ca, the namespaces of a certificate presented without a token: exact (its own namespace only) or subtree (its own and those below it)." enum:"exact,subtree" default:"exact" name:"client-cert-scope"`
	MaxConcurrent  int           `help:"Requests one principal may have in flight, and, separately, GET streams it may hold open." default:"32"`
	MaxConnections int           `help:"Connections open at once, server-wide; more wait until one closes." default:"1024"`
	MaxSessions    int           `help:"MCP sessions one principal may hold; a new one ends its least recently used idle one." default:"64"`
	SessionIdle    time.Duration `help:"An MCP session unused this long ends (the client starts a new one)." default:"30m"`
	HostIdle       time.Duration `help:"A principal with no session and no request for this long has its host dropped (rebuilt on its next request)." default:"10m"`
	ReadTimeout    time.Duration `help:"Bound on reading one request body, from the end of its headers." default:"30s"`
	WriteTimeout   time.Duration `help:"Bound on writing one answer (streams aside)." default:"120s"`
	IdleTimeout    time.Duration `help:"Keep-alive connections idle this long are closed." default:"120s"`
	ShutdownGrace  time.Duration `help:"On SIGTERM, how long calls in flight may take to finish." default:"20s"`
	OAuthIssuer    string        `help:"oauth: the authorization server's issuer URL (the iss claim)." name:"oauth-issuer"`
	OAuthAudience  string        `help:"oauth: this server's resource URL (RFC 8707 audience; default https://<first allowed host>/mcp)." name:"oauth-audience"`
	OAuthJWKS      string        `help:"oauth: JWKS URL (default <issuer>/.well-known/jwks.json)." name:"oauth-jwks"`
	OAuthScopes    []string      `help:"oauth: scopes every token must carry." name:"oauth-scope"`
	OAuthPrincipal string        `help:"oauth: the claim that names the principal." default:"sub" name:"oauth-principal-claim"`
	Profile        string        `help:"Tool profile of every principal (as for mcp)."`
	AgentID        string        `help:"--auth none: the identity of every client (default: ai:<client name>)." env:"AI_MEMORY_AGENT_ID"`
	Namespace      string        `help:"Default namespace of memories a call does not place (default: $$AI_MEMORY_NAMESPACE, else config [mcp].namespace, else the git project it starts in, else global)."`
	EngineIdle     time.Duration `help:"How long a spawned engine waits without clients before it exits." default:"30s" env:"AI_MEMORY_ENGINE_IDLE_TIMEOUT"`
	UI             bool          `help:"Also serve the web console at /ui/: people sign in with an API key and see what it may see (docs/console.md); with --auth none, a one-time login link is logged." name:"ui"`
	MetricsListen  string        `help:"Serve Prometheus metrics at http://ADDR/metrics (off unless given; a port alone, :9464, listens on loopback). No metric holds memory content, a title or a principal (docs/deploy.md)." name:"metrics-listen" env:"AI_MEMORY_METRICS_LISTEN"`
}

func (c *serveCmd) Run(root *rootCmd) error {
	proctune.StartProfiling("host")
	refuse := func(format string, a ...any) error {
		return &exitError{code: 2, msg: "ai-memory serve: " + fmt.Sprintf(format, a...)}
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return refuse("--listen %s: must be host:port", sdk.Quote(c.Listen))
	}
	if c.Auth == "none" && !isLoopback(host) {
		return refuse("--listen %s is not a loopback address, and --auth none would let anyone who can reach it read and write every memory; use --auth token (ai-memory token create) or --auth oauth, or listen on 127.0.0.1", sdk.Quote(c.Listen))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return refuse("--tls-cert and --tls-key go together")
	}
	if c.ClientCA != "" && c.TLSCert == "" {
		return refuse("--client-ca needs --tls-cert and --tls-key (mTLS is TLS)")
	}
	if c.RequireCert && c.ClientCA == "" {
		return refuse("--require-client-cert needs --client-ca")
	}
	if c.UI && c.Auth == "oauth" {
		return refuse("--ui signs people in with API keys (--auth token) or, on loopback, a login link (--auth none); OAuth sign-in to the console is not built")
	}
	for _, bound := range []struct {
		flag string
		n    int64
	}{{"--max-concurrent", int64(c.MaxConcurrent)}, {"--max-connections", int64(c.MaxConnections)}, {"--max-sessions", int64(c.MaxSessions)},
		{"--session-idle", int64(c.SessionIdle)}, {"--host-idle", int64(c.HostIdle)}, {"--read-timeout", int64(c.ReadTimeout)}} {
		if bound.n <= 0 {
			return refuse("%s must be positive", bound.flag)
		}
	}

	var metricsListener net.Listener
	if c.MetricsListen != "" {
		addr, err := metricsAddr(c.MetricsListen)
		if err != nil {
			return refuse("%v", err)
		}
		if metricsListener, err = net.Listen("tcp", addr); err != nil {
			return refuse("--metrics-listen: %v", err)
		}
		defer metricsListener.Close()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := startRuntime(ctx, root, "serve", c.Profile, c.AgentID, c.Namespace, c.EngineIdle, []string{c.TLSKey})
	if err != nil {
		return err
	}
	defer rt.close()
	attest, err := guard.NewAttestation(rt.cfg.MCP.Attestation, rt.sup.Catalog())
	if err != nil {
		return refuse("config %s: %v", rt.cfgPath, err)
	}

	opts := httpfront.Options{
		Hosts:          c.AllowedHost,
		Origins:        c.AllowedOrigin,
		MaxBodyBytes:   int64(rt.maxMessage),
		MaxConcurrent:  c.MaxConcurrent,
		ReadTimeout:    c.ReadTimeout,
		WriteTimeout:   c.WriteTimeout,
		IdleTimeout:    c.IdleTimeout,
		MaxConnections: c.MaxConnections,
		MaxSessions:    c.MaxSessions,
		SessionIdle:    c.SessionIdle,
		HostIdle:       c.HostIdle,
		Heartbeat:      30 * time.Second,
		Audit:          auditlog.Recorder{Engine: rt.engineConn},
		Logger:         rt.log,
	}
	if metricsListener != nil {
		opts.Metrics = metrics.NewHost()
	}
	switch c.Auth {
	case "token":
		opts.Auth = httpfront.TokenAuth{Store: apitoken.Open(rt.dataDir, nil)}
	case "oauth":
		if opts.Auth, opts.Extra, err = c.oauth(rt); err != nil {
			return refuse("%v", err)
		}
	}
	if c.TLSCert != "" {
		if opts.TLS, err = c.tlsConfig(); err != nil {
			return refuse("%v", err)
		}
		if c.ClientCA != "" {
			m := httpfront.MTLSAuth{Next: opts.Auth, Subtree: c.CertScope == "subtree"}
			if c.RequireCert {
				m.Next = nil
			}
			opts.Auth = m
		}
	}
	// A principal's host, for MCP (the serve profile) and the console (every
	// family its credential and the allowlist grant).
	hostFor := func(p httpfront.Principal, profile catalog.Profile) *mcphost.Host {
		o := rt.hostOptions(c.AgentID, uuid.NewString(), false)
		o.Profile = profile
		if p.ID != "" {
			o.AgentID = p.ID
		}
		o.Allowlist = rt.allow.Within(p.Families).Attested(attest, p.Attestation)
		o.Scope = p.Namespaces // --auth none: the local user's, every namespace
		if !slices.Equal(o.Scope, []string{caller.AllNamespaces}) {
			o.Vectors = withoutCounts(o.Vectors) // the host's own call sees the whole store
		}
		o.Attestation = p.Attestation
		o.Metrics = opts.Metrics
		return mcphost.New(o)
	}
	opts.NewHost = func(p httpfront.Principal) *mcphost.Host { return hostFor(p, rt.profile) }
	l, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return refuse("%v", err)
	}
	scheme := "http"
	if opts.TLS != nil {
		scheme = "https"
	}
	var front *httpfront.Front
	if !c.UI {
		front = httpfront.New(opts)
	} else {
		mode := consoleMode{base: scheme + "://" + l.Addr().String(), host: hostFor}
		if c.Auth == "none" { // loopback: the local user, as with ai-memory ui
			id, err := (&operatorID{}).identity()
			if err != nil {
				return err
			}
			mode.local = &httpfront.Principal{ID: id, Namespaces: []string{apitoken.AllNamespaces}}
			mode.print = func(link string) { rt.log.Info("console login link (works once, for 10 minutes)", "url", link) }
		} else {
			mode.keys = &httpfront.TokenAuth{Store: apitoken.Open(rt.dataDir, nil)}
		}
		var con *console.Server
		if front, con, err = rt.consoleFront(root, mode, opts); err != nil {
			return err
		}
		if mode.print != nil {
			mode.print(con.LoginLink())
		}
	}
	if metricsListener != nil {
		serveMetrics(ctx, metricsListener, opts.Metrics, front, rt)
	}

	ready := []any{"url", scheme + "://" + l.Addr().String() + "/mcp", "auth", c.Auth,
		"mtls", c.ClientCA != "", "profile", rt.profile.Label(), "data_dir", rt.dataDir}
	if c.UI {
		ready = append(ready, "console", scheme+"://"+l.Addr().String()+ConsolePrefix)
	}
	rt.log.Info("ai-memory serve ready", ready...)
	err = front.Serve(ctx, l, c.ShutdownGrace)
	if ctx.Err() != nil {
		rt.log.Info("ai-memory serve stopped on signal")
	}
	return err
}

// metricsAddr is --metrics-listen as an address to listen on: a port
// alone (":9464" or "9464") is on loopback; a host, any host, is as given.
func metricsAddr(flag string) (string, error) {
	if !strings.Contains(flag, ":") {
		flag = ":" + flag
	}
	host, port, err := net.SplitHostPort(flag)
	if err != nil || port == "" {
		return "", fmt.Errorf("--metrics-listen %s: must be host:port or a port", sdk.Quote(flag))
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// serveMetrics serves /metrics on l until ctx ends: the host's counters,
// the front's sessions and connections, and the engine's metrics, asked
// of it at each scrape.
func serveMetrics(ctx context.Context, l net.Listener, m *metrics.Host, front *httpfront.Front, rt *runtime) {
	m.Gauge("ai_memory_http_sessions", "Live MCP sessions over HTTP, all principals.", func() float64 { return float64(front.Stats().Sessions) })
	m.Gauge("ai_memory_http_principals", "Principals with a host now (each with its grant).", func() float64 { return float64(front.Stats().Principals) })
	m.Gauge("ai_memory_http_connections", "Open HTTP connections.", func() float64 { return float64(front.Stats().Connections) })
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler(func(ctx context.Context) ([][]byte, error) {
		resp, err := rt.engineConn.Metrics(ctx, &aimemoryv1.MetricsRequest{})
		return resp.GetFamilies(), err
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(rt.log.Handler(), slog.LevelWarn)}
	go srv.Serve(l)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	rt.log.Info("metrics", "url", "http://"+l.Addr().String()+"/metrics")
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c *serveCmd) tlsConfig() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %v", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.ClientCA != "" {
		pem, err := os.ReadFile(c.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("--client-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca %s: no PEM certificate in it", c.ClientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		if c.RequireCert {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return cfg, nil
}

// oauth builds the resource-server authenticator and its metadata paths.
func (c *serveCmd) oauth(rt *runtime) (httpfront.Authenticator, map[string]http.Handler, error) {
	if c.OAuthIssuer == "" || c.OAuthAudience == "" {
		return nil, nil, fmt.Errorf("--auth oauth needs --oauth-issuer (the authorization server) and --oauth-audience (this server's URL, e.g. https://memory.example.com/mcp)")
	}
	aud, err := url.Parse(c.OAuthAudience)
	if err != nil || aud.Host == "" || (aud.Scheme != "https" && aud.Scheme != "http") {
		return nil, nil, fmt.Errorf("--oauth-audience %s: must be an absolute http(s) URL", sdk.Quote(c.OAuthAudience))
	}
	jwks := c.OAuthJWKS
	if jwks == "" {
		jwks = strings.TrimSuffix(c.OAuthIssuer, "/") + "/.well-known/jwks.json"
	}
	kf, err := keyfunc.NewDefaultCtx(context.Background(), []string{jwks})
	if err != nil {
		return nil, nil, fmt.Errorf("--oauth-jwks %s: %v", sdk.Quote(jwks), err)
	}
	path := strings.TrimSuffix(aud.Path, "/")
	meta := aud.Scheme + "://" + aud.Host + "/.well-known/oauth-protected-resource" + path
	doc := httpfront.ProtectedResourceMetadata(c.OAuthAudience, c.OAuthIssuer, c.OAuthScopes)
	extra := map[string]http.Handler{"/.well-known/oauth-protected-resource": doc}
	if path != "" {
		extra["/.well-known/oauth-protected-resource"+path] = doc
	}
	expand := func(names []string) ([]string, error) { return catalog.ExpandNames(names, rt.sup.Catalog()) }
	return httpfront.OAuthAuth{Keyfunc: kf.Keyfunc, Issuer: c.OAuthIssuer, Audience: c.OAuthAudience, Scopes: c.OAuthScopes,
		PrincipalClaim: c.OAuthPrincipal, MetadataURL: meta, ExpandFamilies: expand, Cache: &httpfront.VerifiedCache{}}, extra, nil
}

// withoutCounts is a vector status reader whose store-wide counts are
// left out: what memory_capabilities shows a principal without the grant
// of every namespace.
func withoutCounts(read func(context.Context) (*aimemoryv1.VectorStatusResponse, error)) func(context.Context) (*aimemoryv1.VectorStatusResponse, error) {
	return func(ctx context.Context) (*aimemoryv1.VectorStatusResponse, error) {
		st, err := read(ctx)
		if st != nil {
			st.Memories, st.WithVector, st.OtherModel, st.Queued, st.Withheld = 0, 0, 0, 0, 0
		}
		return st, err
	}
}
