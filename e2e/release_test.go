package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/treeproxy"
	"github.com/ai-memory/ai-memory/internal/version"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestVersionEverywhere: `ai-memory --version` and `ai-memory version`
// print the same release (internal/version), exit 0, and the host's
// capabilities overview and every first-party plugin's Describe say it too.
func TestVersionEverywhere(t *testing.T) {
	e := newEnv(t)
	flag, code := e.cli("--version")
	cmd, code2 := e.cli("version")
	want := regexp.MustCompile(`^ai-memory ` + regexp.QuoteMeta(version.Number) + `(-dev(\+[0-9a-f]{12}(\.dirty)?)?)?\n$`)
	if code != 0 || code2 != 0 || flag != cmd || !want.MatchString(flag) {
		t.Fatalf("--version: exit %d %q; version: exit %d %q; want both to match %s", code, flag, code2, cmd, want)
	}
	v := strings.TrimSpace(strings.TrimPrefix(flag, "ai-memory "))

	h := e.startHost([]string{"--profile", "full"})
	if got := h.ok("memory_capabilities", map[string]any{})["version"]; got != v {
		t.Errorf("capabilities overview version %v, want %s", got, v)
	}
	h.close()
	cached, err := filepath.Glob(filepath.Join(e.dataDir, "plugin-cache", "*.describe"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, f := range cached {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d aimemoryv1.DescribeResponse
		if err := proto.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		seen[d.GetPluginName()] = d.GetPluginVersion()
	}
	for _, p := range []string{"core", "graph", "admin", "power", "archive"} {
		if seen[p] != v {
			t.Errorf("plugin %s reports version %q, want %s (all: %v)", p, seen[p], v, seen)
		}
	}
}

// TestGoInstallFromTheTaggedTree: the modules resolve as published tags
// would. The tree is served as a file:// module proxy at v<Number>
// (treeproxy), and outside any workspace `go install
// .../cmd/ai-memory@v<Number>` builds a host that reports that version,
// and a copy of examples/notes builds against .../sdk@v<Number> and is
// pinned by that host. Other modules come from the local module cache,
// else the Go proxy.
func TestGoInstallFromTheTaggedTree(t *testing.T) {
	t.Parallel() // mostly waiting on the go, npm and pip tools: beside the other slow ones
	goBin, err := exec.LookPath("go")
	if err != nil {
		needInCI(t, "go on PATH")
	}
	tag := "v" + version.Number
	tmp := t.TempDir()
	proxyDir := filepath.Join(tmp, "proxy")
	mods, err := treeproxy.Build(repoRoot(), proxyDir, tag)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 2 {
		t.Fatalf("published modules %v, want the root and sdk", mods)
	}
	cacheOut, err := commandWithin(t, toolDeadline, goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gopath := filepath.Join(tmp, "gopath")
	goEnv := append(os.Environ(),
		"GOWORK=off", "GOTOOLCHAIN=local", "GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOBIN="+filepath.Join(gopath, "bin"),
		// -trimpath: the compiled packages of `make build` (which trims too) are reused from the build cache.
		"GOFLAGS=-modcacherw -trimpath",
		"GOPROXY=file://"+proxyDir+",file://"+filepath.Join(strings.TrimSpace(string(cacheOut)), "cache", "download")+",https://proxy.golang.org",
		"GONOSUMDB=github.com/ai-memory", // not published: no checksum database knows them
	)
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := commandWithin(t, toolDeadline, args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, goEnv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	run(tmp, goBin, "install", "github.com/ai-memory/ai-memory/cmd/ai-memory@"+tag)
	host := filepath.Join(gopath, "bin", "ai-memory")
	if out := run(tmp, host, "--version"); out != "ai-memory "+version.Number+"\n" {
		t.Errorf("installed --version: %q, want ai-memory %s", out, version.Number)
	}
	info := run(tmp, goBin, "version", "-m", host)
	for _, m := range mods {
		if !regexp.MustCompile(`(?m)^\s+(mod|dep)\s+` + regexp.QuoteMeta(m.Path) + `\s+` + regexp.QuoteMeta(tag) + `\s`).MatchString(info) {
			t.Errorf("the installed binary was not built from %s@%s:\n%s", m.Path, tag, info)
		}
	}

	// examples/notes as a plugin author has it: its go.mod as committed, no workspace.
	notes := filepath.Join(tmp, "notes")
	copyNotes(t, notes, nil)
	// As docs/plugins.md says: go get the SDK (its go.sum lines), then build.
	run(notes, goBin, "get", "github.com/ai-memory/ai-memory/sdk@"+tag)
	run(notes, goBin, "build", "-o", "ai-memory-notes", ".")
	if info := run(notes, goBin, "version", "-m", "ai-memory-notes"); !strings.Contains(info, "github.com/ai-memory/ai-memory/sdk\t"+tag) {
		t.Errorf("notes was not built against sdk@%s:\n%s", tag, info)
	}
	home := filepath.Join(tmp, "home")
	add := command(t, host, "plugin", "add", filepath.Join(notes, "ai-memory-notes"))
	add.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"AI_MEMORY_CONFIG=" + filepath.Join(home, "config.toml"), "AI_MEMORY_DATA_DIR=" + filepath.Join(home, "d")}
	if out, err := add.CombinedOutput(); err != nil || !strings.Contains(string(out), "family notes") {
		t.Fatalf("the installed host pinning the notes plugin: %v\n%s", err, out)
	}
}

// needInCI fails the test in CI (CI set) and skips it elsewhere: what a
// developer's machine may lack, CI must have.
func needInCI(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required in CI", what)
	}
	t.Skipf("needs %s", what)
}

// TestReleaseDocs: what `make release` puts beside the binaries holds the
// licence, the changelog, the README and every file the README links to.
func TestReleaseDocs(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		needInCI(t, "make")
	}
	dest := t.TempDir()
	cmd := commandWithin(t, toolDeadline, "make", "--no-print-directory", "-s", "release-docs", "DEST="+dest)
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release-docs: %v\n%s", err, out)
	}
	readme, err := os.ReadFile(filepath.Join(dest, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{"LICENSE", "CHANGELOG.md"}
	for _, m := range mdLink.FindAllStringSubmatch(string(readme), -1) {
		if path, _, _ := strings.Cut(m[1], "#"); path != "" && !strings.Contains(path, "://") {
			targets = append(targets, path)
		}
	}
	for _, p := range targets {
		if _, err := os.Stat(filepath.Join(dest, p)); err != nil {
			t.Errorf("the release archive lacks %s, which the README links to: %v", p, err)
		}
	}
}
