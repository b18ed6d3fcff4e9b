package cli

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
	"github.com/ai-memory/ai-memory/internal/install"
	"github.com/ai-memory/ai-memory/internal/project"
)

// target is what install and init share: where and what to write.
type target struct {
	Project  bool   `help:"Write the project-scoped config (.mcp.json, .vscode/mcp.json, ...) where the harness has one."`
	Dir      string `help:"Project root for --project (default: the git work tree around the current directory, else the current directory)." type:"path"`
	Binary   string `help:"The ai-memory the harness starts: a command name it finds on PATH (ai-memory) or a path (default: this binary's absolute path; in a project config, ai-memory when that is this binary on PATH)."`
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
		Binary: t.Binary, Self: selfPath(), Profile: t.Profile, DataDir: root.DataDir, Home: home,
		LookPath: func(b string) string {
			path, err := exec.LookPath(b)
			if err != nil {
				return ""
			}
			if resolved, err := filepath.EvalSymlinks(path); err == nil {
				return resolved
			}
			return path
		},
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
	Harness   string `arg:"" predictor:"harness" help:"claude-code, claude-desktop, codex, gemini-cli, cursor, windsurf, cline, continue, vscode, zed, grok (xAI) or grok-cli (@vibe-kit/grok-cli)."`
	Apply     bool   `help:"Write the change (after a backup of the file, one kept per file). Without it, show the diff and write nothing."`
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
	if _, err = reportPlan(os.Stdout, p, c.Apply, o); err != nil {
		return err
	}
	if byMeaning, how, next := recallMode(root); !byMeaning && !c.Uninstall && o.Remote == nil {
		fmt.Printf("recall is %s: %s\n", how, next) // a hint only: install never downloads
	}
	return nil
}

// What reportPlan did with a plan.
type outcome int

const (
	unchanged outcome = iota // the file already says it (or has nothing to remove)
	dryRun                   // shown, not written
	written
)

// reportPlan shows a plan (its notes on stderr) and, with apply, carries it out.
func reportPlan(w io.Writer, p *install.Plan, apply bool, o install.Options) (outcome, error) {
	h := p.Harness
	for _, n := range p.Notes {
		fmt.Fprintf(os.Stderr, "%s: %s\n", h.Name, n)
	}
	switch {
	case o.Uninstall && !p.Found:
		fmt.Fprintf(w, "%s: %s has no %q entry written by ai-memory; nothing to remove\n", h.Title, p.Path, o.Name)
		return unchanged, nil
	case !p.Changed():
		fmt.Fprintf(w, "%s: %s already has this entry; no change\n", h.Title, p.Path)
		return unchanged, nil
	}
	if !o.Uninstall && o.Remote == nil {
		fmt.Fprintf(w, "%s: profile %s. %s\n", h.Title, p.Profile, h.Why)
	}
	if !apply {
		fmt.Fprint(w, p.Diff())
		fmt.Fprintf(w, "dry run: nothing written; add --apply to write %s\n", p.Path)
		return dryRun, nil
	}
	start := time.Now()
	backup, err := p.Apply(time.Now())
	if err != nil {
		return dryRun, &exitError{code: 1, msg: fmt.Sprintf("ai-memory install %s: %s: %v", h.Name, p.Path, err)}
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
	return written, nil
}

type initCmd struct {
	Yes       bool     `help:"Do not ask: install into every harness named by --harness, else every one detected."`
	Harnesses []string `name:"harness" sep:"," help:"Harnesses to install into (comma list; default: those detected)."`
	ModelFrom string   `name:"model-from" help:"Download the local embedding model from this mirror, as model pull --from."`
	target
}

// Run detects the harnesses on this machine and installs into those the
// user picks: asked on a terminal (yes or no, asked again until it is
// one), or named with --yes --harness a,b. On a terminal it then offers
// the local embedding model when recall would be by keywords (--yes never
// downloads). It ends with a summary and what to do next.
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
	var added, already, declined, shown, projectOnly, failed []string
	for _, n := range names {
		o, _ := c.options(root, n)
		p, err := install.Make(o)
		if errors.Is(err, install.ErrProjectOnly) {
			projectOnly = append(projectOnly, n)
			continue
		}
		if err != nil {
			fmt.Printf("%s: skipped: %v\n", n, err)
			failed = append(failed, n)
			continue
		}
		title := p.Harness.Title
		apply := c.Yes
		if interactive && p.Changed() {
			if apply = ask(in, fmt.Sprintf("Add ai-memory to %s (%s)?", title, p.Path), true); !apply {
				declined = append(declined, title)
				continue
			}
		}
		switch done, err := reportPlan(os.Stdout, p, apply, o); {
		case err != nil:
			fmt.Println(err)
			failed = append(failed, n)
		case done == written:
			added = append(added, title)
		case done == unchanged:
			already = append(already, title)
		default:
			shown = append(shown, title)
		}
	}
	byMeaning, how, next := recallMode(root)
	var pullErr error
	if !byMeaning && interactive && os.Getenv(modelfiles.EnvDir) == "" {
		m, _ := modelfiles.Lookup(modelfiles.Default)
		if ask(in, fmt.Sprintf("Download the local model %s (%.0f MB, once, from %s) for recall by meaning?", m.Name, float64(m.Size())/1e6, cmp.Or(c.ModelFrom, "Hugging Face")), true) {
			if pullErr = pullModel(m.Name, c.ModelFrom); pullErr != nil {
				fmt.Println(pullErr)
			}
			byMeaning, how, next = recallMode(root)
		}
	}
	fmt.Println()
	for _, l := range []struct {
		what  string
		names []string
	}{{"added to", added}, {"already in", already}, {"declined", declined}, {"dry run (nothing written)", shown},
		{"project config only (run init --project in the project)", projectOnly}, {"not installed", failed}} {
		if len(l.names) > 0 {
			fmt.Printf("%s: %s\n", l.what, strings.Join(l.names, ", "))
		}
	}
	switch {
	case len(added) > 0:
		fmt.Printf("next: restart %s (or start a new session there), then ask the agent to remember something; ai-memory doctor checks the installation\n", strings.Join(added, ", "))
	case len(shown) > 0:
		fmt.Println("next: run ai-memory init on a terminal to answer for each, or ai-memory init --yes to write them all")
	}
	fmt.Println("recall: " + how)
	if !byMeaning {
		fmt.Println("next: " + next)
	}
	if pullErr != nil {
		return &exitError{code: 1, msg: "ai-memory init: the model download failed; ai-memory model pull resumes it"}
	}
	if len(failed) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("ai-memory init: %d of %d harnesses not installed", len(failed), len(names))}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
