package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/ai-memory/ai-memory/internal/apitoken"
	"github.com/ai-memory/ai-memory/internal/auditlog"
	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/console"
	"github.com/ai-memory/ai-memory/internal/httpfront"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/supervisor"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ConsolePrefix is where the web console is served, by ui and serve --ui.
const ConsolePrefix = "/ui/"

type uiCmd struct {
	Listen     string        `help:"Address to listen on (host:port); loopback only: for a team, serve --ui." default:"127.0.0.1:8421" env:"AI_MEMORY_UI_LISTEN"`
	NoOpen     bool          `help:"Do not open a browser; only print the login link." name:"no-open"`
	EngineIdle time.Duration `help:"How long a spawned engine waits without clients before it exits." default:"30s" env:"AI_MEMORY_ENGINE_IDLE_TIMEOUT"`
	operatorID
}

// Run serves the web console to the local operator: every namespace, the
// operator views, and a one-time login link printed here (as notebook
// servers do), which lands on the most recent memories.
func (c *uiCmd) Run(root *rootCmd) error {
	refuse := func(format string, a ...any) error {
		return &exitError{code: 2, msg: "ai-memory ui: " + fmt.Sprintf(format, a...)}
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return refuse("--listen %s: must be host:port", sdk.Quote(c.Listen))
	}
	if !isLoopback(host) {
		return refuse("--listen %s is not a loopback address: ai-memory ui acts as the local operator, with every namespace; for a team use ai-memory serve --ui, where each person signs in with an API key", sdk.Quote(c.Listen))
	}
	id, err := c.identity()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := startRuntime(ctx, root, "ui", "full", id, "", c.EngineIdle, nil)
	if err != nil {
		return err
	}
	defer rt.close()
	l, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return refuse("%v", err)
	}
	mode := consoleMode{local: &httpfront.Principal{ID: id, Namespaces: []string{apitoken.AllNamespaces}},
		base:  "http://" + l.Addr().String(),
		print: func(link string) { fmt.Println("ai-memory ui: a new login link:", link) },
		host: func(p httpfront.Principal, profile catalog.Profile) *mcphost.Host {
			o := rt.hostOptions(p.ID, uuid.NewString(), false)
			o.Profile, o.Scope = profile, p.Namespaces
			return mcphost.New(o)
		}}
	front, con, err := rt.consoleFront(root, mode, httpfront.Options{Audit: auditlog.Recorder{Engine: rt.engineConn}, Logger: rt.log})
	if err != nil {
		return err
	}
	link := con.LoginLink()
	fmt.Printf("ai-memory ui: the console of %s, as %s\n", rt.dataDir, id)
	fmt.Printf("ai-memory ui: open %s (it works once, for 10 minutes)\n", link)
	if !c.NoOpen {
		openBrowser(link)
	}
	rt.log.Info("ai-memory ui ready", "url", "http://"+l.Addr().String()+ConsolePrefix, "identity", id, "data_dir", rt.dataDir)
	return front.Serve(ctx, l, 5*time.Second)
}

// consoleMode is how people sign in: as the local operator through login
// links (local set), or with API keys (keys set); and how a principal's
// host is built, as for MCP but with the profile given.
type consoleMode struct {
	local *httpfront.Principal
	base  string
	print func(link string)
	keys  *httpfront.TokenAuth
	host  func(httpfront.Principal, catalog.Profile) *mcphost.Host
}

// consoleFront builds the console and, unless opts already serve MCP, a
// front for it alone: the same Host and Origin checks, connection bound,
// deadlines and audited refusals as serve's. Each signed-in principal gets
// a host of its own with every family it may use (the families its
// credential and the allowlist grant; the others' pages are hidden).
func (rt *runtime) consoleFront(root *rootCmd, mode consoleMode, opts httpfront.Options) (*httpfront.Front, *console.Server, error) {
	full, err := catalog.ParseProfile("full", rt.sup.Catalog())
	if err != nil {
		return nil, nil, err
	}
	var front *httpfront.Front
	// The surface cost changes only with the plugins, fixed for this process.
	cost := sync.OnceValues(func() (*console.Cost, error) { return costReport(root) })
	pins := &pinCache{seen: map[string]pinResult{}}
	copts := console.Options{
		Prefix:   ConsolePrefix,
		LinkBase: mode.base, PrintLink: mode.print,
		Logger:  rt.log,
		Version: Version,
		NewHost: func(p console.Principal) console.Host { return mode.host(p, full) },
		Refused: func(r *http.Request, principal string, status int, kind, msg string) {
			front.RecordRefusal(r, principal, status, kind, msg)
		},
		Operator: console.Operator{
			Health: func(context.Context) []console.Check {
				var out []console.Check
				for _, c := range doctorChecks(root, false, pins.verify) {
					out = append(out, console.Check{Name: c.Name, Status: c.Status, Detail: c.Detail})
				}
				return out
			},
			Cost: func(context.Context) (*console.Cost, error) { return cost() },
			Audit: func(ctx context.Context, limit int) (*console.Audit, error) {
				return auditReport(ctx, rt.engineConn, rt.dataDir, limit)
			},
		},
	}
	if mode.local != nil {
		copts.Local = *mode.local
	} else {
		copts.Keys = mode.keys.Principal
	}
	con, err := console.New(copts)
	if err != nil {
		return nil, nil, err
	}
	opts.UI, opts.UIPrefix = con, ConsolePrefix
	front = httpfront.New(opts)
	return front, con, nil
}

// pinCache checks plugin binaries against their pins once per version of
// each file (its size and modification time): the health page would
// otherwise hash every plugin (about 90 MB) on each load. The supervisor
// still checks each binary when it starts it.
type pinCache struct {
	mu   sync.Mutex
	seen map[string]pinResult
}

type pinResult struct {
	size     int64
	modified time.Time
	pin      string
	err      error
}

func (c *pinCache) verify(b supervisor.Binary) error {
	fi, err := os.Stat(b.Path)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.seen[b.Path]; ok && r.size == fi.Size() && r.modified.Equal(fi.ModTime()) && r.pin == b.Checksum {
		return r.err
	}
	err = supervisor.Verify(b)
	c.seen[b.Path] = pinResult{size: fi.Size(), modified: fi.ModTime(), pin: b.Checksum, err: err}
	return err
}

// costReport is `doctor --tokens` for every named profile: the families
// from the full profile's report, each profile's whole surface.
func costReport(root *rootCmd) (*console.Cost, error) {
	c := &console.Cost{}
	for _, name := range catalog.ProfileNames {
		r, err := tokensReport(root, name)
		if err != nil {
			return nil, err
		}
		c.Tokenizer = r.Tokenizer
		c.Profiles = append(c.Profiles, console.Bar{Name: name, Tools: r.ActiveTools, Tokens: r.ActiveTotal})
		if name == "full" {
			for _, f := range r.Families {
				c.Families = append(c.Families, console.Bar{Name: f.Name, Tools: f.ToolCount, Tokens: f.Tokens})
			}
		}
	}
	return c, nil
}

// auditReport is audit list and audit verify, for the console.
func auditReport(ctx context.Context, conn *wire.EngineConn, dataDir string, limit int) (*console.Audit, error) {
	list, err := conn.ListAudit(ctx, &aimemoryv1.ListAuditRequest{Limit: uint32(limit)})
	if err != nil {
		return nil, err
	}
	v, err := conn.VerifyAudit(ctx, &aimemoryv1.VerifyAuditRequest{})
	if err != nil {
		return nil, err
	}
	a := &console.Audit{OK: v.GetOk(), Count: v.GetCount(), HeadHash: v.GetHeadHash(), FirstBadSeq: v.GetFirstBadSeq(),
		Problem: v.GetProblem(), Checks: verifyChecks(v, dataDir)}
	for _, r := range list.GetRecords() {
		a.Records = append(a.Records, console.AuditRecord{Seq: r.GetSeq(), At: record.FormatTime(r.GetAt()), AgentID: r.GetAgentId(),
			Event: r.GetEvent(), Family: r.GetFamily(), Tool: r.GetTool(), Granted: r.GetGranted(), Reason: r.GetReason(),
			Attestation: r.GetAttestation(), Suppressed: r.GetSuppressed()})
	}
	return a, nil
}

// openBrowser opens link in the desktop's browser, if there is one to ask;
// the link is printed either way.
func openBrowser(link string) {
	name := map[string]string{"darwin": "open", "linux": "xdg-open", "freebsd": "xdg-open"}[goruntime.GOOS]
	path, err := exec.LookPath(name)
	if name == "" || err != nil {
		return
	}
	cmd := exec.Command(path, link)
	if err := cmd.Start(); err == nil {
		go cmd.Wait()
	}
}
