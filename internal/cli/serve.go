package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
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
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/guard"
	"github.com/ai-memory/ai-memory/internal/httpfront"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
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
	MaxConcurrent  int           `help:"Requests one principal may have in flight, and, separately, GET streams it may hold open." default:"32"`
	ReadTimeout    time.Duration `help:"Bound on reading one request." default:"30s"`
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
}

func (c *serveCmd) Run(root *rootCmd) error {
	sdk.StartProfiling("host")
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := startRuntime(ctx, root, "serve", c.Profile, c.AgentID, c.Namespace, c.EngineIdle)
	if err != nil {
		return err
	}
	defer rt.close()
	attest, err := guard.NewAttestation(rt.cfg.MCP.Attestation, rt.sup.Catalog())
	if err != nil {
		return refuse("config %s: %v", rt.cfgPath, err)
	}

	opts := httpfront.Options{
		Hosts:         c.AllowedHost,
		Origins:       c.AllowedOrigin,
		MaxBodyBytes:  int64(rt.maxMessage),
		MaxConcurrent: c.MaxConcurrent,
		ReadTimeout:   c.ReadTimeout,
		WriteTimeout:  c.WriteTimeout,
		IdleTimeout:   c.IdleTimeout,
		Heartbeat:     30 * time.Second,
		Logger:        rt.log,
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
			opts.Auth = httpfront.MTLSAuth{Next: opts.Auth}
			if c.RequireCert {
				opts.Auth = httpfront.MTLSAuth{}
			}
		}
	}
	opts.NewHost = func(p httpfront.Principal) *mcphost.Host {
		o := rt.hostOptions(c.AgentID, uuid.NewString(), false)
		if p.ID != "" {
			o.AgentID = p.ID
		}
		o.Allowlist = rt.allow.Within(p.Families).Attested(attest, p.Attestation)
		if c.Auth != "none" { // --auth none: the local user's loopback sessions keep every namespace
			o.Scope = p.Namespaces
		}
		if !slices.Equal(o.Scope, []string{caller.AllNamespaces}) {
			o.Vectors = withoutCounts(o.Vectors) // the host's own call sees the whole store
		}
		o.Attestation = p.Attestation
		return mcphost.New(o)
	}

	l, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return refuse("%v", err)
	}
	scheme := "http"
	if opts.TLS != nil {
		scheme = "https"
	}
	rt.log.Info("ai-memory serve ready", "url", scheme+"://"+l.Addr().String()+"/mcp", "auth", c.Auth,
		"mtls", c.ClientCA != "", "profile", rt.profile.Label(), "data_dir", rt.dataDir)
	err = httpfront.New(opts).Serve(ctx, l, c.ShutdownGrace)
	if ctx.Err() != nil {
		rt.log.Info("ai-memory serve stopped on signal")
	}
	return err
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
	return httpfront.OAuthAuth{Keyfunc: kf.Keyfunc, Issuer: c.OAuthIssuer, Audience: c.OAuthAudience, Scopes: c.OAuthScopes,
		PrincipalClaim: c.OAuthPrincipal, MetadataURL: meta, Cache: &httpfront.VerifiedCache{}}, extra, nil
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
