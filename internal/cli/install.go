package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/install"
	"github.com/ai-memory/ai-memory/internal/project"
)

// target is what install and init share: where and what to write.
type target struct {
	Project  bool   `help:"Write the project-scoped config (.mcp.json, .vscode/mcp.json, ...) where the harness has one."`
	Dir      string `help:"Project root for --project (default: the git work tree around the current directory, else the current directory)." type:"path"`
	Binary   string `help:"The ai-memory binary the harness starts (default: this binary's absolute path)." type:"path"`
	Profile  string `help:"Profile to write (default: the harness's own, see docs/install.md)."`
	Name     string `help:"The server's key in the harness config." default:"ai-memory"`
	URL      string `name:"url" help:"Write the remote form: the Streamable HTTP URL of an ai-memory server."`
	TokenEnv string `help:"With --url: the environment variable that holds the bearer token (the token is never written)."`
}

func (t *target) options(root *rootCmd, harness string) (install.Options, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return install.Options{}, err
	}
	o := install.Options{
		Harness: harness, Project: t.Project, ProjectDir: t.Dir, Name: t.Name,
		Binary: t.Binary, Profile: t.Profile, DataDir: root.DataDir, Home: home,
		LookPath: func(b string) bool { _, err := exec.LookPath(b); return err == nil },
	}
	if o.Binary == "" {
		o.Binary = selfPath()
	}
	if t.Profile != "" {
		if _, err := catalog.ParseRequest(t.Profile); err != nil {
			return o, &exitError{code: 2, msg: "ai-memory install: --profile: " + err.Error()}
		}
	}
	if t.Project && o.ProjectDir == "" {
		cwd, err := os.Getwd()
		if err != nil {
			return o, err
		}
		o.ProjectDir = cwd
		if root, ok := project.Root(cwd); ok {
			o.ProjectDir = root
		}
	}
	if t.TokenEnv != "" && t.URL == "" {
		return o, &exitError{code: 2, msg: "ai-memory install: --token-env needs --url"}
	}
	if t.URL != "" {
		if !strings.HasPrefix(t.URL, "https://") && !strings.HasPrefix(t.URL, "http://") {
			return o, &exitError{code: 2, msg: fmt.Sprintf("ai-memory install: --url %q (%d bytes): must start with https:// or http://", clip(t.URL), len(t.URL))}
		}
		o.Remote = &install.Remote{URL: t.URL, TokenEnv: t.TokenEnv}
	}
	return o, nil
}

type installCmd struct {
	Harness   string `arg:"" predictor:"harness" help:"claude-code, claude-desktop, codex, gemini-cli, cursor, windsurf, cline, continue, vscode, zed or grok-cli."`
	Apply     bool   `help:"Write the change (after a timestamped backup). Without it, show the diff and write nothing."`
	Uninstall bool   `help:"Remove the entry install wrote, and nothing else."`
	File      string `help:"Edit this config file instead of the harness's own." type:"path"`
	target
}

func (c *installCmd) Run(root *rootCmd) error {
	o, err := c.options(root, c.Harness)
	if err != nil {
		return err
	}
	o.File, o.Uninstall = c.File, c.Uninstall
	p, err := install.Make(o)
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory install " + c.Harness + ": " + err.Error()}
	}
	return reportPlan(os.Stdout, p, c.Apply, o)
}

// reportPlan shows a plan and, with apply, carries it out.
func reportPlan(w io.Writer, p *install.Plan, apply bool, o install.Options) error {
	h := p.Harness
	switch {
	case o.Uninstall && !p.Found:
		fmt.Fprintf(w, "%s: %s has no %q entry written by ai-memory; nothing to remove\n", h.Title, p.Path, o.Name)
		return nil
	case !p.Changed():
		fmt.Fprintf(w, "%s: %s already has this entry; no change\n", h.Title, p.Path)
		return nil
	}
	if !o.Uninstall && o.Remote == nil {
		fmt.Fprintf(w, "%s: profile %s. %s\n", h.Title, p.Profile, h.Why)
	}
	if !apply {
		fmt.Fprint(w, p.Diff())
		fmt.Fprintf(w, "dry run: nothing written; add --apply to write %s\n", p.Path)
		return nil
	}
	start := time.Now()
	backup, err := p.Apply(time.Now())
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("ai-memory install %s: %s: %v", h.Name, p.Path, err)}
	}
	verb := "wrote"
	if p.Delete {
		verb = "removed"
	}
	fmt.Fprintf(w, "%s: %s %s", h.Title, verb, p.Path)
	if backup != "" {
		fmt.Fprintf(w, " (backup %s)", backup)
	}
	fmt.Fprintf(w, " in %s\n", time.Since(start).Round(time.Microsecond))
	return nil
}

type initCmd struct {
	Yes       bool     `help:"Do not ask: install into every harness named by --harness, else every one detected."`
	Harnesses []string `name:"harness" sep:"," help:"Harnesses to install into (comma list; default: those detected)."`
	target
}

// Run detects the harnesses on this machine and installs into those the
// user picks: asked on a terminal, or named with --yes --harness a,b.
func (c *initCmd) Run(root *rootCmd) error {
	names := c.Harnesses
	probe, err := c.options(root, "")
	if err != nil {
		return err
	}
	if len(names) == 0 {
		for _, h := range install.Harnesses {
			if h.Detected(&probe) {
				names = append(names, h.Name)
			}
		}
		if len(names) == 0 {
			fmt.Printf("no harness detected; name one: ai-memory init --yes --harness %s\n", strings.Join(install.Names(), ","))
			return nil
		}
		fmt.Printf("detected: %s\n", strings.Join(names, ", "))
	}
	for _, n := range names {
		if _, err := install.Lookup(n); err != nil {
			return &exitError{code: 2, msg: "ai-memory init: --harness: " + err.Error()}
		}
	}
	interactive := !c.Yes && isatty.IsTerminal(os.Stdin.Fd())
	if !c.Yes && !interactive {
		fmt.Println("not a terminal and no --yes: showing what would change, writing nothing")
	}
	in := bufio.NewReader(os.Stdin)
	failed := 0
	for _, n := range names {
		o, _ := c.options(root, n)
		p, err := install.Make(o)
		if err != nil {
			fmt.Printf("%s: skipped: %v\n", n, err)
			failed++
			continue
		}
		apply := c.Yes
		if interactive && p.Changed() {
			fmt.Printf("Use ai-memory in %s (%s)? [Y/n] ", p.Harness.Title, p.Path)
			answer, _ := in.ReadString('\n')
			answer = strings.ToLower(strings.TrimSpace(answer))
			apply = answer == "" || answer == "y" || answer == "yes"
			if !apply {
				continue
			}
		}
		if err := reportPlan(os.Stdout, p, apply, o); err != nil {
			fmt.Println(err)
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("ai-memory init: %d of %d harnesses not installed", failed, len(names))}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
