package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/internal/catalog"
)

// Each harness is described from its own documentation or source; the
// addresses are in docs/install.md.

type format int

const (
	formatJSON     format = iota // JSON or JSONC, edited on hujson's tree
	formatTOML                   // Codex's config.toml, one marked block
	formatYAMLFile               // a block file of our own (Continue)
)

// Harness is one MCP client ai-memory can be installed into.
type Harness struct {
	Name  string // the install argument
	Title string

	format    format
	container []string // key path of the servers object (JSON formats)
	user      func(o *Options) (string, error)
	project   string // config path relative to the project root, "" if none

	stdio  func(name string, l Launch) any
	remote func(name string, r Remote) any // nil: no remote form
	// noRemote says why there is no remote form.
	noRemote string

	// Profile is written explicitly; Why is the reason, shown by install.
	Profile string
	Why     string

	detect []string // files or directories (~ is the home) whose presence means installed
	bins   []string // executables on PATH that mean installed
	// binIs, when set, must accept the resolved path of a bins executable
	// (two harnesses install a `grok`).
	binIs func(path string) bool
}

// Launch is how a harness starts the stdio server.
type Launch struct {
	Command string
	Args    []string
}

// Remote is the Streamable HTTP form: a URL and the environment variable
// that holds the bearer token (the token itself is never written).
type Remote struct {
	URL      string
	TokenEnv string
	profile  string // the profile install was given (the server decides its own)
}

func (r Remote) header(ref string) ordered {
	if r.TokenEnv == "" {
		return nil
	}
	return ordered{{"Authorization", "Bearer " + ref}}
}

func withHeaders(o ordered, h ordered) ordered {
	if h != nil {
		o = append(o, field{"headers", h})
	}
	return o
}

// The harness notes install prints, as each harness was measured (Claude
// Code 2.1.197, Codex CLI 0.171.0, Gemini CLI 0.61.0 against a loopback
// provider: e2e/harness) or, where marked, as its documentation says.
const (
	whyClaudeCode = "Claude Code sends the six core tools in full with every request (tool search, on against " +
		"Anthropic's API, defers only other tools) and refreshes its list on tools/list_changed: a session " +
		"expands on demand with memory_capabilities {\"family\": F, \"include_schema\": true}, and the next request " +
		"offers F's tools. On core the entry says alwaysLoad, so `claude -p` connects ai-memory before its first " +
		"request; `claude -p` runs MCP tools only with --allowedTools mcp__ai-memory."
	whyCodex = "Codex never re-reads its tool list (it ignores tools/list_changed), so it stays on core and reaches " +
		"other families through memory_capabilities {\"tool\": T, \"arguments\": {...}}. memory_capabilities and " +
		"core's tools are approved in advance so `codex exec` can call them (docs/install.md says why)."
	whyGemini = "Gemini CLI sends every schema with every request and refreshes its list on tools/list_changed: " +
		"a session expands on demand with memory_capabilities {\"family\": F, \"include_schema\": true}, and the " +
		"next request offers F's tools. `gemini -p` runs MCP tools only with --yolo."
	whyListChanged = "refreshes its tool list on tools/list_changed (its documentation says), so it starts on core " +
		"and a session expands on demand: memory_capabilities {\"family\": F, \"include_schema\": true}."
	whyEager = "loads every tool schema when it starts and does not act on tools/list_changed (its documentation " +
		"says), so every extra family costs input tokens on every request: core, with other tools run through " +
		"memory_capabilities {\"tool\": T, \"arguments\": {...}}, or reinstall with --profile."
)

// profileOf is the --profile an entry's arguments name.
func (l Launch) profileOf() string {
	for i, a := range l.Args {
		if a == "--profile" && i+1 < len(l.Args) {
			return l.Args[i+1]
		}
	}
	return ""
}

// codexApprovals approves in advance the tools every profile lists: core's
// and memory_capabilities (whose bridge runs what ai-memory's allowlist
// lets this identity run). Other tools keep Codex's default, which runs
// read-only tools and asks for the rest (`codex exec` refuses them).
func codexApprovals() ordered {
	var o ordered
	for _, t := range append(slices.Clone(catalog.AlwaysOn), catalog.Contract().ToolsOf(catalog.Base)...) {
		o = append(o, field{"tools." + t + ".approval_mode", "approve"})
	}
	return o
}

func stdioEntry(typ string) func(string, Launch) any {
	return func(_ string, l Launch) any {
		o := ordered{}
		if typ != "" {
			o = append(o, field{"type", typ})
		}
		return append(o, field{"command", l.Command}, field{"args", l.Args})
	}
}

// Harnesses lists every supported harness, in the order init asks.
var Harnesses = []*Harness{
	{
		Name: "claude-code", Title: "Claude Code",
		container: []string{"mcpServers"},
		user: func(o *Options) (string, error) {
			if d := o.getenv("CLAUDE_CONFIG_DIR"); d != "" {
				return filepath.Join(d, ".claude.json"), nil
			}
			return filepath.Join(o.Home, ".claude.json"), nil
		},
		project: ".mcp.json",
		// On core, whose tools Claude Code loads in full anyway, alwaysLoad
		// changes one thing: `claude -p` connects the server before its
		// first request instead of in the background. A larger profile
		// keeps tool search's deferral. (A remote entry goes by --profile
		// too: the server's own profile decides what it lists.)
		stdio: func(name string, l Launch) any {
			o := stdioEntry("stdio")(name, l).(ordered)
			if l.profileOf() == catalog.Base {
				o = append(o, field{"alwaysLoad", true})
			}
			return o
		},
		remote: func(_ string, r Remote) any {
			o := withHeaders(ordered{{"type", "http"}, {"url", r.URL}}, r.header("${"+r.TokenEnv+"}"))
			if r.profile == catalog.Base {
				o = append(o, field{"alwaysLoad", true})
			}
			return o
		},
		Profile: "core", Why: whyClaudeCode,
		detect: []string{"~/.claude.json", "~/.claude"}, bins: []string{"claude"},
	},
	{
		Name: "claude-desktop", Title: "Claude Desktop",
		container: []string{"mcpServers"},
		user: func(o *Options) (string, error) {
			return filepath.Join(o.appConfigDir(), "Claude", "claude_desktop_config.json"), nil
		},
		stdio:    stdioEntry(""),
		noRemote: "Claude Desktop adds remote servers as connectors in its settings, not in claude_desktop_config.json",
		Profile:  "core", Why: "Claude Desktop " + whyEager,
		detect: []string{"@app/Claude"},
	},
	{
		Name: "codex", Title: "Codex CLI",
		format: formatTOML,
		user: func(o *Options) (string, error) {
			if d := o.getenv("CODEX_HOME"); d != "" {
				return filepath.Join(d, "config.toml"), nil
			}
			return filepath.Join(o.Home, ".codex", "config.toml"), nil
		},
		project: filepath.Join(".codex", "config.toml"),
		stdio: func(_ string, l Launch) any {
			return append(ordered{{"command", l.Command}, {"args", l.Args}}, codexApprovals()...)
		},
		remote: func(_ string, r Remote) any {
			o := ordered{{"url", r.URL}}
			if r.TokenEnv != "" {
				o = append(o, field{"bearer_token_env_var", r.TokenEnv})
			}
			return append(o, codexApprovals()...)
		},
		Profile: "core", Why: whyCodex,
		detect: []string{"~/.codex"}, bins: []string{"codex"},
	},
	{
		Name: "gemini-cli", Title: "Gemini CLI",
		container: []string{"mcpServers"},
		user: func(o *Options) (string, error) {
			return filepath.Join(o.Home, ".gemini", "settings.json"), nil
		},
		project: filepath.Join(".gemini", "settings.json"),
		stdio:   stdioEntry(""),
		remote: func(_ string, r Remote) any {
			return withHeaders(ordered{{"httpUrl", r.URL}}, r.header("$"+r.TokenEnv))
		},
		Profile: "core", Why: whyGemini,
		detect: []string{"~/.gemini"}, bins: []string{"gemini"},
	},
	{
		Name: "cursor", Title: "Cursor",
		container: []string{"mcpServers"},
		user: func(o *Options) (string, error) {
			return filepath.Join(o.Home, ".cursor", "mcp.json"), nil
		},
		project: filepath.Join(".cursor", "mcp.json"),
		stdio:   stdioEntry(""),
		remote: func(_ string, r Remote) any {
			return withHeaders(ordered{{"url", r.URL}}, r.header("${env:"+r.TokenEnv+"}"))
		},
		Profile: "core", Why: "Cursor " + whyEager,
		detect: []string{"~/.cursor"}, bins: []string{"cursor"},
	},
	{
		Name: "windsurf", Title: "Windsurf",
		container: []string{"mcpServers"},
		user: func(o *Options) (string, error) {
			return filepath.Join(o.Home, ".codeium", "windsurf", "mcp_config.json"), nil
		},
		stdio: stdioEntry(""),
		remote: func(_ string, r Remote) any {
			return withHeaders(ordered{{"serverUrl", r.URL}}, r.header("${env:"+r.TokenEnv+"}"))
		},
		Profile: "core", Why: "Windsurf " + whyEager,
		detect: []string{"~/.codeium/windsurf"}, bins: []string{"windsurf"},
	},
	{
		Name: "cline", Title: "Cline (VS Code extension)",
		container: []string{"mcpServers"},
		user: func(o *Options) (string, error) {
			return filepath.Join(o.vscodeUserDir(), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), nil
		},
		stdio: func(_ string, l Launch) any {
			return ordered{{"command", l.Command}, {"args", l.Args}, {"disabled", false}}
		},
		noRemote: "Cline does not expand environment variables in headers, so the token would have to be written into the file",
		Profile:  "core", Why: "Cline " + whyEager,
		detect: []string{"@vscode/globalStorage/saoudrizwan.claude-dev"},
	},
	{
		Name: "continue", Title: "Continue",
		format: formatYAMLFile,
		user: func(o *Options) (string, error) {
			return filepath.Join(o.Home, ".continue", "mcpServers", "ai-memory.yaml"), nil
		},
		project:  filepath.Join(".continue", "mcpServers", "ai-memory.yaml"),
		noRemote: "Continue reads header secrets from its own secrets store, not from environment variables",
		Profile:  "core", Why: "Continue " + whyEager,
		detect: []string{"~/.continue"},
	},
	{
		Name: "vscode", Title: "VS Code (Copilot agent mode)",
		container: []string{"servers"},
		user: func(o *Options) (string, error) {
			return filepath.Join(o.vscodeUserDir(), "mcp.json"), nil
		},
		project: filepath.Join(".vscode", "mcp.json"),
		stdio:   stdioEntry("stdio"),
		remote: func(_ string, r Remote) any {
			return withHeaders(ordered{{"type", "http"}, {"url", r.URL}}, r.header("${env:"+r.TokenEnv+"}"))
		},
		Profile: "core", Why: "VS Code " + whyListChanged,
		detect: []string{"@vscode"}, bins: []string{"code"},
	},
	{
		Name: "zed", Title: "Zed",
		container: []string{"context_servers"},
		user: func(o *Options) (string, error) {
			base := o.getenv("XDG_CONFIG_HOME")
			if base == "" || o.GOOS == "darwin" {
				base = filepath.Join(o.Home, ".config")
			}
			if o.GOOS == "windows" {
				base = o.getenv("APPDATA")
			}
			return filepath.Join(base, "zed", "settings.json"), nil
		},
		project: filepath.Join(".zed", "settings.json"),
		stdio: func(_ string, l Launch) any {
			return ordered{{"source", "custom"}, {"command", l.Command}, {"args", l.Args}, {"env", ordered{}}}
		},
		noRemote: "Zed's remote form (url, headers) takes the header as written; its settings do not read it from the environment",
		Profile:  "core", Why: "Zed " + whyListChanged,
		detect: []string{"~/.config/zed"}, bins: []string{"zed"},
	},
	{
		// xAI's own: Grok Build, the `grok` command.
		Name: "grok", Title: "Grok (xAI)",
		format: formatTOML,
		user: func(o *Options) (string, error) {
			return filepath.Join(o.grokHome(), "config.toml"), nil
		},
		project: filepath.Join(".grok", "config.toml"),
		stdio: func(_ string, l Launch) any {
			return ordered{{"command", l.Command}, {"args", l.Args}}
		},
		remote: func(_ string, r Remote) any {
			return withHeaders(ordered{{"url", r.URL}}, r.header("${"+r.TokenEnv+"}"))
		},
		Profile: "core", Why: "Grok " + whyEager,
		detect: []string{"~/.grok/config.toml", "~/.grok/bin/grok"}, bins: []string{"grok"},
		binIs: func(path string) bool { return !vibeKit(path) },
	},
	{
		// The community's @vibe-kit/grok-cli, also a `grok` command.
		Name: "grok-cli", Title: "grok-cli (@vibe-kit/grok-cli)",
		container: []string{"mcpServers"},
		user: func(*Options) (string, error) {
			return "", fmt.Errorf("%w: grok-cli reads MCP servers only from .grok/settings.json in the project (grok-cli 0.0.34): use --project", ErrProjectOnly)
		},
		project: filepath.Join(".grok", "settings.json"),
		stdio: func(name string, l Launch) any {
			return ordered{{"name", name}, {"transport", ordered{{"type", "stdio"}, {"command", l.Command}, {"args", l.Args}, {"env", ordered{}}}}}
		},
		noRemote: "grok-cli does not expand environment variables in headers, so the token would have to be written into the file",
		Profile:  "core", Why: "grok-cli " + whyEager,
		detect: []string{"~/.grok/user-settings.json"}, bins: []string{"grok"},
		binIs: vibeKit,
	},
}

// ErrProjectOnly: the harness has no user config, only a project one.
var ErrProjectOnly = errors.New("no user config")

// Lookup finds a harness by name.
func Lookup(name string) (*Harness, error) {
	for _, h := range Harnesses {
		if h.Name == name {
			return h, nil
		}
	}
	return nil, fmt.Errorf("unknown harness %q (%d bytes); one of: %s", clip(name), len(name), strings.Join(Names(), ", "))
}

// Names lists the harness names.
func Names() []string {
	var n []string
	for _, h := range Harnesses {
		n = append(n, h.Name)
	}
	return n
}

// Detected reports whether the harness looks installed for this user.
func (h *Harness) Detected(o *Options) bool {
	for _, p := range h.detect {
		if _, err := os.Stat(o.expand(p)); err == nil {
			return true
		}
	}
	for _, b := range h.bins {
		if path := o.lookPath(b); path != "" && (h.binIs == nil || h.binIs(path)) {
			return true
		}
	}
	return false
}

// vibeKit: the resolved path of a `grok` is the community grok-cli's npm
// package (npm links its bin into node_modules/@vibe-kit/grok-cli).
func vibeKit(path string) bool {
	return strings.Contains(filepath.ToSlash(path), "/@vibe-kit/grok-cli/")
}

// grokHome is xAI's Grok home: $GROK_HOME, else ~/.grok.
func (o *Options) grokHome() string {
	if d := o.getenv("GROK_HOME"); d != "" {
		return d
	}
	return filepath.Join(o.Home, ".grok")
}

// HasProject reports whether the harness has a project-scoped config.
func (h *Harness) HasProject() bool { return h.project != "" }

// HasRemote reports whether the harness has a remote form, and if not why.
func (h *Harness) HasRemote() (bool, string) { return h.remote != nil, h.noRemote }

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
