// Package cli is the ai-memory command line: `mcp` serves MCP on stdio,
// `engine` (hidden) owns a data dir's bbolt file, `doctor` checks an
// installation. Output for people goes to stderr when stdout is MCP's.
package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
	kongcompletion "github.com/jotaen/kong-completion"
	"github.com/posener/complete"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/install"
	"github.com/ai-memory/ai-memory/internal/version"
)

// Version is what this binary reports (internal/version).
var Version = version.String()

type rootCmd struct {
	Config  string `help:"config.toml path (default: $$AI_MEMORY_CONFIG, else $$XDG_CONFIG_HOME/ai-memory/config.toml)." type:"path"`
	DataDir string `help:"data directory (default: $$AI_MEMORY_DATA_DIR, else $$XDG_DATA_HOME/ai-memory)." type:"path"`

	ShowVersion kong.VersionFlag `name:"version" help:"Print the version and exit."`

	MCP     mcpCmd     `cmd:"" name:"mcp" help:"Serve MCP on stdio."`
	Serve   serveCmd   `cmd:"" help:"Serve MCP over Streamable HTTP (loopback by default; see docs/deploy.md)."`
	UI      uiCmd      `cmd:"" name:"ui" help:"Open the web console on this machine (docs/console.md)."`
	Token   tokenCmd   `cmd:"" help:"Manage the API keys of serve --auth token."`
	Engine  engineCmd  `cmd:"" hidden:"" help:"Run the storage engine for a data dir (started by hosts)."`
	Launch  launchCmd  `cmd:"" hidden:"" name:"plugin-exec" help:"Start a plugin confined (started by hosts)."`
	Doctor  doctorCmd  `cmd:"" help:"Check the installation: config, data dir, engine, plugins."`
	Plugin  pluginCmd  `cmd:"" help:"Add, list and remove third-party family plugins (pinned by SHA-256 in config.toml)."`
	Audit   auditCmd   `cmd:"" help:"Read and verify the audit log of guarded decisions."`
	Stats   statsCmd   `cmd:"" help:"Print the store's health: counts, index, archive, sizes."`
	Reindex reindexCmd `cmd:"" help:"Embed the memories that have no vector by the configured embedding model."`
	Model   modelCmd   `cmd:"" help:"Pull, import, list and remove the local embedding model (recall by meaning with no endpoint)."`
	Store   storeCmd   `cmd:"" group:"memory" help:"Store a memory (content from --content or standard input)."`
	Recall  recallCmd  `cmd:"" group:"memory" help:"Recall memories relevant to a context, best first."`
	Search  searchCmd  `cmd:"" group:"memory" help:"Memories containing every word of a query."`
	List    listCmd    `cmd:"" group:"memory" help:"List memories, newest first."`
	Get     getCmd     `cmd:"" group:"memory" help:"Show one memory."`
	Forget  forgetCmd  `cmd:"" group:"memory" help:"Archive the memories matching words, a namespace or a tier (a dry run unless --yes or you confirm)."`
	Delete  deleteCmd  `cmd:"" group:"memory" help:"Delete one memory, for good or --archive (asks first unless --yes)."`
	Update  updateCmd  `cmd:"" group:"memory" help:"Edit a memory; its old version is kept in the archive."`
	Archive archiveCmd `cmd:"" group:"memory" help:"List and restore archived memories (what forget, delete --archive and update kept)."`

	Export  exportCmd  `cmd:"" help:"Write every record (memories, archive, versions, links, entities, standards, pending approvals, webhook subscriptions) as JSON Lines, ids and provenance kept."`
	Import  importCmd  `cmd:"" help:"Read what export wrote; records already there are unchanged, so a second import changes nothing."`
	Backup  backupCmd  `cmd:"" help:"Write a consistent copy of the data dir's database, while it is in use."`
	Restore restoreCmd `cmd:"" help:"Put a backup in place as the database of an empty data dir."`
	Migrate migrateCmd `cmd:"" help:"Copy the data dir's store into PostgreSQL (--to postgres DSN), with its engine stopped: resumable, verified by counts and checksums."`

	Install installCmd `cmd:"" help:"Add ai-memory to a harness's MCP config (dry run unless --apply)."`
	Init    initCmd    `cmd:"" help:"Detect installed harnesses and add ai-memory to those you pick."`
	Version versionCmd `cmd:"" help:"Print the version."`

	Completion kongcompletion.Completion `cmd:"" help:"Print the shell code that turns on tab completion (bash, zsh, fish)."`

	// Set by Main before a command runs: its name ("audit list") and the
	// config every command reads the same way (see loadConfig).
	command string        `kong:"-"`
	cfg     config.Config `kong:"-"`
	cfgPath string        `kong:"-"`
}

type versionCmd struct{}

func (versionCmd) Run() error {
	fmt.Println("ai-memory", Version)
	return nil
}

// exitError ends the process with a code after printing its message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Main runs the CLI and returns the process exit code: 0, 1 when a
// command failed, 2 for a usage error (a bad flag, argument or config).
func Main(args []string) int {
	var root rootCmd
	parser, err := kong.New(&root,
		kong.Name("ai-memory"),
		kong.Description("Persistent memory for AI coding agents, over MCP."),
		kong.Vars{"version": "ai-memory " + Version},
		kong.Exit(func(code int) { os.Exit(code) }),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kongcompletion.Register(parser, kongcompletion.WithPredictor("harness", complete.PredictSet(install.Names()...))) // answers the shell's completion requests (COMP_LINE), then exits
	if len(args) == 0 {
		args = []string{"--help"} // no command is a question, not an error
	}
	ctx, err := parser.Parse(args)
	if err != nil {
		usageError(parser, err)
		return 2
	}
	root.command = commandName(ctx.Selected())
	if err := root.loadConfig(); err != nil {
		return fail(&root, err)
	}
	return fail(&root, ctx.Run(&root))
}

// fail prints a command's error and returns its exit code (0 for none).
func fail(root *rootCmd, err error) int {
	if err == nil {
		return 0
	}
	var e *exitError
	if errors.As(err, &e) {
		fmt.Fprintln(os.Stderr, e.msg)
		return e.code
	}
	fmt.Fprintf(os.Stderr, "ai-memory %s: %v\n", root.command, err)
	return 1
}

// usageError prints what was wrong with the command line and the usage of
// the command it named (or of ai-memory), not the whole help.
func usageError(parser *kong.Kong, err error) {
	node := parser.Model.Node
	var pe *kong.ParseError
	if errors.As(err, &pe) && pe.Context != nil && pe.Context.Selected() != nil {
		node = pe.Context.Selected()
	}
	name := strings.TrimSpace("ai-memory " + commandName(node))
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	fmt.Fprintf(os.Stderr, "usage: %s\n", strings.Join(strings.Fields("ai-memory "+node.Summary()), " "))
	fmt.Fprintf(os.Stderr, "Run \"%s --help\" for more.\n", name)
}

// commandName is a command's words without its arguments ("audit list").
func commandName(n *kong.Node) string {
	var words []string
	for ; n != nil; n = n.Parent {
		if n.Type == kong.CommandNode {
			words = append(words, n.Name)
		}
	}
	slices.Reverse(words)
	return strings.Join(words, " ")
}

// noConfig are the commands that do not read config.toml: doctor reports
// a bad one as a check, the engine reads its data dir's engine.toml, and
// install and init write harness configs (they warn about a bad one).
var noConfig = []string{"", "version", "completion", "doctor", "engine", "install", "init"}

// loadConfig reads config.toml once, before the command runs, the same way
// for every command: a file that does not parse, or holds a section or key
// this version does not know, is a usage error naming the file and the key.
func (r *rootCmd) loadConfig() error {
	r.cfgPath = config.Path(r.Config)
	top, _, _ := strings.Cut(r.command, " ")
	cfg, err := config.Load(r.cfgPath)
	switch {
	case err == nil:
		r.cfg = cfg
		return nil
	case top == "install" || top == "init":
		fmt.Fprintf(os.Stderr, "warning: %v; ai-memory will not start from a harness until it is fixed (ai-memory doctor)\n", err)
		return nil
	case slices.Contains(noConfig, top):
		return nil
	}
	return &exitError{code: 2, msg: "ai-memory " + r.command + ": " + err.Error()}
}
