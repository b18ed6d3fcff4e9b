// Package cli is the ai-memory command line: `mcp` serves MCP on stdio,
// `engine` (hidden) owns a data dir's bbolt file, `doctor` checks an
// installation. Output for people goes to stderr when stdout is MCP's.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/alecthomas/kong"
	kongcompletion "github.com/jotaen/kong-completion"
	"github.com/posener/complete"

	"github.com/ai-memory/ai-memory/internal/install"
)

// Version is set at build time (-ldflags "-X ...cli.Version=...").
var Version = "0.1.0-dev"

type rootCmd struct {
	Config  string `help:"config.toml path (default: $$AI_MEMORY_CONFIG, else $$XDG_CONFIG_HOME/ai-memory/config.toml)." type:"path"`
	DataDir string `help:"data directory (default: $$AI_MEMORY_DATA_DIR, else $$XDG_DATA_HOME/ai-memory)." type:"path"`

	MCP     mcpCmd     `cmd:"" name:"mcp" help:"Serve MCP on stdio."`
	Serve   serveCmd   `cmd:"" help:"Serve MCP over Streamable HTTP (loopback by default; see docs/deploy.md)."`
	Token   tokenCmd   `cmd:"" help:"Manage the API keys of serve --auth token."`
	Engine  engineCmd  `cmd:"" hidden:"" help:"Run the storage engine for a data dir (started by hosts)."`
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

	Export  exportCmd  `cmd:"" help:"Write every record (memories, archive, versions, links, entities, standards, pending approvals, webhook subscriptions) as JSON Lines, ids and provenance kept."`
	Import  importCmd  `cmd:"" help:"Read what export wrote; records already there are unchanged, so a second import changes nothing."`
	Backup  backupCmd  `cmd:"" help:"Write a consistent copy of the data dir's database, while it is in use."`
	Restore restoreCmd `cmd:"" help:"Put a backup in place as the database of an empty data dir."`
	Migrate migrateCmd `cmd:"" help:"Copy the data dir's store into PostgreSQL (--to postgres DSN), with its engine stopped: resumable, verified by counts and checksums."`

	Install installCmd `cmd:"" help:"Add ai-memory to a harness's MCP config (dry run unless --apply)."`
	Init    initCmd    `cmd:"" help:"Detect installed harnesses and add ai-memory to those you pick."`
	Version versionCmd `cmd:"" help:"Print the version."`

	Completion kongcompletion.Completion `cmd:"" help:"Print the shell code that turns on tab completion (bash, zsh, fish)."`
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

// Main runs the CLI and returns the process exit code.
func Main(args []string) int {
	var root rootCmd
	parser, err := kong.New(&root,
		kong.Name("ai-memory"),
		kong.Description("Persistent memory for AI coding agents, over MCP."),
		kong.UsageOnError(),
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
		parser.FatalIfErrorf(err)
	}
	if err := ctx.Run(&root); err != nil {
		var e *exitError
		if errors.As(err, &e) {
			fmt.Fprintln(os.Stderr, e.msg)
			return e.code
		}
		fmt.Fprintf(os.Stderr, "ai-memory %s: %v\n", ctx.Command(), err)
		return 1
	}
	return 0
}
