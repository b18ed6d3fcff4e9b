package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// The commands for people (store, recall, search, list, get) speak MCP to
// a host this binary starts, as an operator identity: they go through the
// same validation, identity stamping and audit as an agent's calls, and
// nothing here knows the core family's internals.

type operator struct {
	operatorID
	JSON bool `help:"Print the tool's JSON answer."`
}

// operatorID is the identity flag of every command that acts on the data
// dir as an operator.
type operatorID struct {
	Identity string `help:"Operator identity the CLI acts as (default: cli:<os user>)." env:"AI_MEMORY_CLI_IDENTITY"`
}

// engine connects to the data dir's engine as the operator (starting it if
// needed; a data dir with no database is an error, see engineClient).
func (o *operatorID) engine(root *rootCmd) (string, *sdk.EngineConn, error) {
	id, err := o.identity()
	if err != nil {
		return "", nil, err
	}
	conn, err := engineClient(root, id)
	return id, conn, err
}

func (o *operatorID) identity() (string, error) {
	id := o.Identity
	if id == "" {
		name := "unknown"
		if u, err := user.Current(); err == nil && u.Username != "" {
			name = u.Username
		}
		// An OS user name may hold characters an agent id may not (DOMAIN\user).
		name = strings.Map(func(r rune) rune {
			if r < 128 && (r == '_' || r == '-' || r == '.' || r == '@' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return r
			}
			return '_'
		}, name)
		id = "cli:" + name
	}
	if err := record.ValidateAgentID("--identity", id); err != nil {
		return "", &exitError{code: 2, msg: "ai-memory: " + err.Error()}
	}
	return id, nil
}

// toolSession is an MCP session with `ai-memory mcp`, for one command.
type toolSession struct {
	c      *client.Client
	cmd    string      // the command's name, which its errors begin with
	stderr *tailBuffer // the host's last words, for when it fails
}

func (s *toolSession) Close() { s.c.Close() }

// session starts `ai-memory mcp` as the operator with profile's families
// and initializes MCP. The host's stderr is kept (its tail): when it exits
// before answering, its last line says why.
func (o *operator) session(root *rootCmd, profile string) (*toolSession, error) {
	id, err := o.identity()
	if err != nil {
		return nil, err
	}
	args := []string{"mcp", "--agent-id", id, "--profile", profile}
	if root.Config != "" {
		args = append(args, "--config", root.Config)
	}
	if root.DataDir != "" {
		args = append(args, "--data-dir", root.DataDir)
	}
	s := &toolSession{cmd: root.command, stderr: &tailBuffer{max: 4 << 10}}
	s.c, err = client.NewStdioMCPClientWithOptions(selfPath(), os.Environ(), args, transport.WithCommandStderrWriter(s.stderr))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "ai-memory-cli", Version: Version}
	if _, err := s.c.Initialize(ctx, req); err != nil {
		s.c.Close()
		if last := s.stderr.lastLine(); last != "" {
			return nil, fmt.Errorf("the host (ai-memory mcp) did not start: %s", last)
		}
		return nil, fmt.Errorf("starting ai-memory mcp: %w", err)
	}
	return s, nil
}

// call runs one core tool as the operator; an isError answer is exit status 1.
func (o *operator) call(root *rootCmd, tool string, args map[string]any) ([]byte, error) {
	return o.callIn(root, "core", tool, args)
}

// callIn runs one tool in a session of profile's families.
func (o *operator) callIn(root *rootCmd, profile, tool string, args map[string]any) ([]byte, error) {
	s, err := o.session(root, profile)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.call(tool, args)
}

// call runs one tool in the session; an isError answer is exit status 1,
// its text after the command's name.
func (s *toolSession) call(tool string, args map[string]any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	if res.IsError {
		return nil, &exitError{code: 1, msg: "ai-memory " + s.cmd + ": " + text.String()}
	}
	return []byte(text.String()), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

// lastLine is the last line that is not empty.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// show prints the answer as JSON, or via human.
func (o *operator) show(out []byte, human func(map[string]any)) error {
	if o.JSON {
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Println(string(b))
		return nil
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		return err
	}
	human(v)
	return nil
}

func setIf(m map[string]any, k string, v any) {
	switch x := v.(type) {
	case string:
		if x != "" {
			m[k] = x
		}
	case int:
		if x != 0 {
			m[k] = x
		}
	case []string:
		if len(x) > 0 {
			m[k] = x
		}
	}
}

type storeCmd struct {
	Title     string   `required:"" help:"Title (unique per namespace)."`
	Content   string   `help:"Content; - or absent reads standard input." default:"-"`
	Tier      string   `help:"How long it lives: short (6 hours), mid (7 days) or long (never expires); a recall keeps a short one at least an hour more, a mid one a day. These are the defaults of [ttl] in config.toml." enum:"short,mid,long" default:"mid"`
	Namespace string   `help:"Namespace (default: $$AI_MEMORY_NAMESPACE, else config [mcp].namespace, else the git project around the current directory, named after its origin remote, else its folder; else global)."`
	Tag       []string `help:"A tag (repeatable)."`
	Priority  int      `help:"1-10 (default 5)."`
	operator
}

// contentArg is a --content value; "-" reads it from standard input (one
// byte over the content limit at most, so the engine names the rule).
func contentArg(v string) (string, error) {
	if v != "-" {
		return v, nil
	}
	b, err := io.ReadAll(io.LimitReader(os.Stdin, record.MaxContentBytes+1))
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n"), nil
}

func (c *storeCmd) Run(root *rootCmd) error {
	content, err := contentArg(c.Content)
	if err != nil {
		return err
	}
	args := map[string]any{"title": c.Title, "content": content, "source": "cli", "format": "json"}
	setIf(args, "tier", c.Tier)
	setIf(args, "namespace", c.Namespace)
	setIf(args, "tags", c.Tag)
	setIf(args, "priority", c.Priority)
	out, err := c.call(root, "memory_store", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) {
		fmt.Printf("stored %v in %v as %v; %s\n", v["id"], v["namespace"], v["agent_id"], lifetime(root, cell(v["tier"])))
	})
}

// lifetime says how long a memory of tier lives under the data dir's
// engine settings ([ttl]), as the engine applies them.
func lifetime(root *rootCmd, tier string) string {
	set, _, err := settings.Load(config.DataDir(root.DataDir))
	if err != nil {
		return "tier " + tier
	}
	ttl := engine.TiersFromSettings(set)
	d := ttl.ForTier(tier)
	if d <= 0 {
		return "tier " + tier + ": it never expires"
	}
	line := fmt.Sprintf("tier %s: it expires in %s", tier, durationText(d))
	if extend := map[string]time.Duration{"short": ttl.ShortExtend, "mid": ttl.MidExtend}[tier]; extend > 0 {
		line += fmt.Sprintf(", and a recall keeps it at least %s more", durationText(extend))
	}
	return line + " (--tier long never expires)"
}

// durationText is d in whole days, else hours, else minutes.
func durationText(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return plural(int(d/(24*time.Hour)), "day", "days")
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour", "hours")
	}
	return d.Round(time.Second).String()
}

type recallCmd struct {
	Context   []string `arg:"" help:"What to recall."`
	Namespace string   `help:"Only this namespace (a/b also matches a; default: every namespace)."`
	Limit     int      `help:"At most this many (default 10)."`
	operator
}

func (c *recallCmd) Run(root *rootCmd) error {
	args := map[string]any{"context": strings.Join(c.Context, " "), "format": "json"}
	setIf(args, "namespace", c.Namespace)
	setIf(args, "limit", c.Limit)
	out, err := c.call(root, "memory_recall", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) { memoryTable(v["memories"], true) })
}

type searchCmd struct {
	Query     []string `arg:"" help:"Words that must all appear."`
	Namespace string   `help:"Only this namespace (default: every namespace)."`
	Tier      string   `help:"Only this tier." enum:",short,mid,long" default:""`
	Limit     int      `help:"At most this many (default 20)."`
	operator
}

func (c *searchCmd) Run(root *rootCmd) error {
	args := map[string]any{"query": strings.Join(c.Query, " "), "format": "json"}
	setIf(args, "namespace", c.Namespace)
	setIf(args, "tier", c.Tier)
	setIf(args, "limit", c.Limit)
	out, err := c.call(root, "memory_search", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) { memoryTable(v["results"], false) })
}

type listCmd struct {
	Namespace string `help:"Only this namespace (default: every namespace)."`
	Tier      string `help:"Only this tier." enum:",short,mid,long" default:""`
	Limit     int    `help:"At most this many (default 20)."`
	operator
}

func (c *listCmd) Run(root *rootCmd) error {
	args := map[string]any{"format": "json"}
	setIf(args, "namespace", c.Namespace)
	setIf(args, "tier", c.Tier)
	setIf(args, "limit", c.Limit)
	out, err := c.call(root, "memory_list", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) { memoryTable(v["memories"], false) })
}

type getCmd struct {
	ID string `arg:"" help:"Id or unique prefix."`
	operator
}

func (c *getCmd) Run(root *rootCmd) error {
	out, err := c.call(root, "memory_get", map[string]any{"id": c.ID, "format": "json"})
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) {
		t := table.NewWriter()
		t.SetOutputMirror(os.Stdout)
		t.SetStyle(table.StyleLight)
		for _, k := range []string{"id", "title", "namespace", "tier", "priority", "confidence", "tags", "source",
			"created_by", "updated_by", "created_at", "updated_at", "expires_at", "metadata"} {
			if x, ok := v[k]; ok {
				t.AppendRow(table.Row{k, cell(x)})
			}
		}
		t.Render()
		fmt.Println(v["content"])
	})
}

// memoryTable prints memories one per row, content cut to one short line.
func memoryTable(rows any, score bool) {
	list, _ := rows.([]any)
	if len(list) == 0 {
		fmt.Println("no memories")
		return
	}
	t := table.NewWriter()
	t.SetOutputMirror(os.Stdout)
	t.SetStyle(table.StyleLight)
	header := table.Row{"id", "title", "namespace", "tier", "updated", "content"}
	if score {
		header = append(header, "score")
	}
	t.AppendHeader(header)
	for _, r := range list {
		m, _ := r.(map[string]any)
		id, _ := m["id"].(string)
		if len(id) > 8 {
			id = id[:8]
		}
		row := table.Row{id, clipRunes(cell(m["title"]), 40), m["namespace"], m["tier"], minute(cell(m["updated_at"])), clipRunes(oneLine(cell(m["content"])), 60)}
		if score {
			row = append(row, m["score"])
		}
		t.AppendRow(row)
	}
	t.Render()
}

// minute is an RFC 3339 time cut to the minute, as "2026-12-01 14:00".
func minute(t string) string {
	if len(t) > 16 {
		return strings.Replace(t[:16], "T", " ", 1)
	}
	return t
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any, map[string]any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
