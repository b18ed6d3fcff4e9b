package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/treeproxy"
	"github.com/ai-memory/ai-memory/internal/version"
)

// docBlockTimeout bounds one block of commands from the docs.
const docBlockTimeout = 2 * time.Minute

// docBlock is one fenced sh block of a markdown file.
type docBlock struct {
	line   int    // the opening fence's line, from 1
	code   string // the commands, de-indented
	notRun string // the reason given in <!-- not run: reason --> on the line before, else ""
}

var (
	fenceOpen = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*([^`\\s]*)")
	notRunRe  = regexp.MustCompile(`^<!--\s*not run:(.*)-->$`)
)

// docBlocks returns the fenced sh blocks of a markdown file, and an error
// for a not-run marker without a reason or not followed by an sh block.
func docBlocks(text string) ([]docBlock, error) {
	lines := strings.Split(text, "\n")
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if m := notRunRe.FindStringSubmatch(trimmed); m != nil {
			if strings.TrimSpace(m[1]) == "" {
				return nil, fmt.Errorf("line %d: a not-run marker says why", i+1)
			}
			if f := fenceOpen.FindStringSubmatch(lines[min(i+1, len(lines)-1)]); i+1 == len(lines) || f == nil || f[3] != "sh" {
				return nil, fmt.Errorf("line %d: a not-run marker stands on the line before an sh block", i+1)
			}
			continue
		}
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence, lang := m[1], m[2], m[3]
		b := docBlock{line: i + 1}
		var code []string
		for i++; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimSpace(lines[i]), fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i]), fence[:1])) == "" {
				break
			}
			code = append(code, strings.TrimPrefix(lines[i], indent))
		}
		if lang != "sh" {
			continue
		}
		if b.line >= 2 {
			if nm := notRunRe.FindStringSubmatch(strings.TrimSpace(lines[b.line-2])); nm != nil {
				b.notRun = strings.TrimSpace(nm[1])
			}
		}
		b.code = strings.Join(code, "\n") + "\n"
		out = append(out, b)
	}
	return out, nil
}

// TestDocsCommands runs every fenced sh block of README.md and docs/*.md
// that is not marked `<!-- not run: reason -->`, in order within its file,
// as a reader would type them on a fresh machine: bash -euo pipefail, a
// new HOME (so the default config and data dir are new), the built
// binaries on PATH and ./bin linking to them, Go modules of this
// repository resolved from the tree served as a module proxy at the
// release version, each block bounded in time.
func TestDocsCommands(t *testing.T) {
	t.Parallel() // mostly waiting on the go, npm and pip tools: beside the other slow ones
	root := repoRoot()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	goBin, _ := exec.LookPath("go")
	proxy := filepath.Join(t.TempDir(), "proxy")
	if _, err := treeproxy.Build(root, proxy, "v"+version.Number); err != nil {
		t.Fatal(err)
	}
	runnable, notRun := 0, 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		blocks, err := docBlocks(string(raw))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		var run []docBlock
		for _, b := range blocks {
			if b.notRun != "" {
				notRun++
				continue
			}
			run = append(run, b)
		}
		runnable += len(run)
		if len(run) == 0 {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			if strings.Contains(strings.Join(blockCodes(run), ""), "go ") && goBin == "" {
				needInCI(t, "go on PATH")
			}
			sb := newDocSandbox(t, proxy, goBin)
			for _, b := range run {
				if out, err := sb.run(b.code); err != nil {
					t.Fatalf("%s:%d: %v\n%s\n--- output ---\n%s", rel, b.line, err, b.code, out)
				}
			}
		})
	}
	t.Logf("docs: %d sh blocks run, %d marked not run", runnable, notRun)
	if runnable == 0 {
		t.Fatal("no sh block found to run")
	}
}

func blockCodes(bs []docBlock) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.code)
	}
	return out
}

// docSandbox is one file's reader: a home, a working directory, an
// environment made from nothing but what the docs assume.
type docSandbox struct {
	dir, work string
	env       []string
}

func newDocSandbox(t *testing.T, proxy, goBin string) *docSandbox {
	dir, err := os.MkdirTemp("", "aimdoc") // short: the data dir holds a unix socket
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopProcessesMentioning(dir)
		os.RemoveAll(dir)
	})
	sb := &docSandbox{dir: dir, work: filepath.Join(dir, "work")}
	home := filepath.Join(dir, "home")
	for _, d := range []string{home, sb.work, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bins, filepath.Join(sb.work, "bin")); err != nil {
		t.Fatal(err)
	}
	sb.env = []string{
		"PATH=" + bins + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "TMPDIR=" + filepath.Join(dir, "tmp"), "LANG=C.UTF-8", "TERM=dumb",
		"AI_MEMORY_ENGINE_IDLE_TIMEOUT=2s", // the engines a block starts leave soon after it
	}
	if goBin != "" {
		cache, err := commandWithin(t, toolDeadline, goBin, "env", "GOCACHE", "GOMODCACHE").Output()
		if err != nil {
			t.Fatal(err)
		}
		c := strings.Fields(string(cache))
		sb.env = append(sb.env, "GOCACHE="+c[0], "GOPATH="+filepath.Join(dir, "go"), "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local",
			"GOPROXY=file://"+proxy+",file://"+filepath.Join(c[1], "cache", "download")+",https://proxy.golang.org",
			"GONOSUMDB=github.com/ai-memory") // the release is not published: no checksum database knows it
	}
	return sb
}

// run runs one block with bash in the sandbox, in its own process group
// (killed with the block's background processes when it ends).
func (sb *docSandbox) run(code string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), docBlockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", code)
	cmd.Dir, cmd.Env = sb.work, sb.env
	cmd.Stdin = strings.NewReader("") // as from a script: no terminal, nothing typed
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v: %w", docBlockTimeout, err)
	}
	return out.String(), err
}

// stopProcessesMentioning kills what still runs from dir (an engine a
// block's host started, which outlives the block by its idle timeout) and
// waits until it is gone.
func stopProcessesMentioning(dir string) {
	for _, p := range processesMentioning(dir) {
		syscall.Kill(p, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(10 * time.Second); len(processesMentioning(dir)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link of README.md and docs/*.md names a
// file that exists, and a #fragment names a heading of it.
func TestDocsLinks(t *testing.T) {
	root := repoRoot()
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"),
		filepath.Join(root, "sdk", "typescript", "README.md"), filepath.Join(root, "sdk", "python", "README.md"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
			}
			body, err := os.ReadFile(file)
			if err != nil {
				if info, serr := os.Stat(file); serr == nil && info.IsDir() && frag == "" {
					continue
				}
				t.Errorf("%s: link %s: %v", rel, target, err)
				continue
			}
			if frag != "" && !headingSlugs(string(body))[frag] {
				t.Errorf("%s: link %s: no heading #%s in %s", rel, target, frag, filepath.Base(file))
			}
		}
	}
}

// headingSlugs are the anchors GitHub gives a markdown file's headings.
func headingSlugs(text string) map[string]bool {
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range strings.Split(text, "\n") {
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			s := strings.ToLower(strings.TrimSpace(h))
			s = drop.ReplaceAllString(strings.ReplaceAll(s, "`", ""), "")
			out[strings.ReplaceAll(s, " ", "-")] = true
		}
	}
	return out
}
