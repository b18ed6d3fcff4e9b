// Package console is the web console: server-rendered pages over the
// families' tools. Each page runs tools by name through the signed-in
// principal's own host (mcphost.Host.Call), so the allowlist, the
// namespace grant, the engine's rules and the audit are exactly an
// agent's; the console holds no family logic and is no second way in.
// Operator views (health, token cost, the audit chain) are the CLI's own
// reports, handed in as functions, and need the grant of every namespace.
//
// Pages are html/template (memory content is always text), with one
// stylesheet and one small script, embedded; every answer carries a
// Content-Security-Policy with frame-ancestors 'none' and no inline
// script, and every change needs the session's CSRF token.
package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/apitoken"
	"github.com/ai-memory/ai-memory/internal/httpfront"
)

// Principal is who a console session acts for, as sign-in established it:
// the same as an MCP client's over HTTP, so its host is built the same way.
type Principal = httpfront.Principal

// operator reports whether p holds the operator grant (every namespace),
// which the health, cost and audit views need.
func operator(p Principal) bool { return slices.Equal(p.Namespaces, []string{apitoken.AllNamespaces}) }

// Host is what the console needs of a principal's host (*mcphost.Host).
type Host interface {
	// Call runs a tool through the host's tool-call path.
	Call(ctx context.Context, tool string, args json.RawMessage) ([]byte, bool)
	// Callable reports whether the principal may run tool: what a page
	// cannot run is hidden.
	Callable(tool string) bool
}

// Operator holds the operator views: the CLI's reports (nil: not shown).
type Operator struct {
	Health func(ctx context.Context) []Check
	Cost   func(ctx context.Context) (*Cost, error)
	Audit  func(ctx context.Context, limit int) (*Audit, error)
}

// Options configure a Server.
type Options struct {
	// Prefix is where the console is served ("/ui/").
	Prefix string
	// Keys signs a person in with an API key (team mode). Nil is local
	// mode: one-time login links, printed on the terminal, sign in as Local.
	Keys  func(key string) (Principal, error)
	Local Principal
	// LinkBase is the console's origin for login links (http://127.0.0.1:8421);
	// PrintLink shows a new link on the terminal (local mode).
	LinkBase  string
	PrintLink func(link string)
	// NewHost builds a principal's host (once per principal and grant, while
	// it has a session).
	NewHost  func(Principal) Host
	Operator Operator
	// Refused records a request the console turned away (a failed sign-in,
	// a change without its CSRF token): the front's log and audit.
	Refused func(r *http.Request, principal string, status int, kind, msg string)
	Logger  *slog.Logger
	Version string
}

// Server is the console's http.Handler.
type Server struct {
	opts     Options
	log      *slog.Logger
	mux      *http.ServeMux
	sessions *sessions
	pages    map[string]*pageTemplate
	static   map[string]staticFile
	// staticVersion changes with the assets, so they can be cached for long.
	staticVersion string
	// linkPrinted limits how often the sign-in page may print a new link.
	linkPrinted struct {
		sync.Mutex
		at time.Time
	}
}

// New builds the console.
func New(opts Options) (*Server, error) {
	if opts.Prefix == "" {
		opts.Prefix = "/ui/"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Refused == nil {
		opts.Refused = func(*http.Request, string, int, string, string) {}
	}
	s := &Server{opts: opts, log: opts.Logger, sessions: newSessions(opts.NewHost)}
	if err := s.loadAssets(); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// LoginLink is a new one-time login link (local mode): it works once,
// within loginLinkLife, and lands on the most recent memories.
func (s *Server) LoginLink() string {
	return strings.TrimSuffix(s.opts.LinkBase, "/") + s.opts.Prefix + "login?token=" + s.sessions.newLink()
}

func (s *Server) routes() {
	p := s.opts.Prefix
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { s.redirect(w, r, "memories") })
	m.HandleFunc("GET "+p+"{$}", func(w http.ResponseWriter, r *http.Request) { s.redirect(w, r, "memories") })
	m.HandleFunc("GET "+p+"static/{file}", s.serveStatic)
	m.HandleFunc("GET "+p+"login", s.loginPage)
	m.HandleFunc("POST "+p+"login", s.loginWithKey)
	m.HandleFunc("POST "+p+"login/link", s.newLoginLink)
	m.HandleFunc("POST "+p+"logout", s.change(s.logout))

	m.HandleFunc("GET "+p+"memories", s.page("memory_list", s.memoriesPage))
	m.HandleFunc("GET "+p+"memory/{id}", s.page("memory_get", s.memoryPage))
	m.HandleFunc("GET "+p+"memory/{id}/edit", s.page("memory_update", s.editPage))
	m.HandleFunc("POST "+p+"memory/{id}/edit", s.change(s.edit))
	m.HandleFunc("POST "+p+"memory/{id}/promote", s.change(s.promote))
	m.HandleFunc("POST "+p+"memory/{id}/forget", s.change(s.forget))
	m.HandleFunc("POST "+p+"memory/{id}/restore", s.change(s.restore))
	m.HandleFunc("GET "+p+"graph", s.page("memory_kg_query", s.graphPage))
	m.HandleFunc("GET "+p+"review", s.page("", s.reviewPage))
	m.HandleFunc("POST "+p+"pending/{id}/{decision}", s.change(s.decide))
	m.HandleFunc("GET "+p+"activity", s.page("memory_list", s.activityPage))
	m.HandleFunc("GET "+p+"cost", s.operatorPage(s.costPage))
	m.HandleFunc("GET "+p+"health", s.operatorPage(s.healthPage))
	s.mux = m
}

// ServeHTTP answers every request with the console's security headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// No inline script or style anywhere; forms post only here; no framing.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// A login link's token never leaves for another site in a Referer; not
	// no-referrer, with which the browser sends "Origin: null" on its posts.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), interest-cohort=()")
	if r.TLS != nil {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if !strings.HasPrefix(r.URL.Path, s.opts.Prefix+"static/") {
		h.Set("Cache-Control", "no-store")
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, s.opts.Prefix+path, http.StatusSeeOther)
}

// staticFile is an embedded asset.
type staticFile struct {
	body        []byte
	contentType string
}

func (s *Server) loadAssets() error {
	s.static = map[string]staticFile{}
	sum := sha256.New()
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
	entries, err := fs.ReadDir(assets, "static")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(assets, "static/"+e.Name())
		if err != nil {
			return err
		}
		ct := types[e.Name()[strings.LastIndexByte(e.Name(), '.'):]]
		if ct == "" {
			return fmt.Errorf("console asset %s: unknown type", e.Name())
		}
		s.static[e.Name()] = staticFile{body: b, contentType: ct}
		sum.Write(b)
	}
	s.staticVersion = hex.EncodeToString(sum.Sum(nil))[:12]
	return s.parseTemplates()
}

func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	f, ok := s.static[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	// Pages name assets with ?v=<hash of every asset>: a new build is a new URL.
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Write(f.body)
}

// now is the clock of pages (what "about to expire" is measured from).
var now = time.Now
