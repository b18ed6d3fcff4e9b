package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNotesBuildsOutsideTheTree builds a copy of examples/notes the way
// docs/plugins.md tells an author to while the SDK is unpublished: its own
// module beside a checkout, the one replace the guide shows, no
// workspace (GOWORK=off) and no module proxy for ai-memory's modules. The binary links the SDK and
// not the tokenizer, which only what counts tokens imports.
// (TestGoInstallFromTheTaggedTree builds it as a published release, with
// no replace at all.)
func TestNotesBuildsOutsideTheTree(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		needInCI(t, "go on PATH")
	}
	guide, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	// One line: the generated protocol is inside the SDK module.
	block := regexp.MustCompile("```\n(replace [^\n]+)\n```").FindSubmatch(guide)
	if block == nil {
		t.Fatal("docs/plugins.md shows no one-line replace")
	}

	tmp := t.TempDir()
	// The guide's layout: the author's module beside a checkout named ai-memory.
	if err := os.Symlink(repoRoot(), filepath.Join(tmp, "ai-memory")); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(tmp, "ai-memory-notes")
	copyNotes(t, notes, append(append([]byte("\n"), block[1]...), '\n'))
	run := func(args ...string) string {
		t.Helper()
		cmd := commandWithin(t, toolDeadline, goBin, args...)
		cmd.Dir = notes
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod",
			// ai-memory's modules from no proxy, only the replace; the SDK's
			// dependencies at its own versions, which the workspace never
			// needed, from the module cache or the Go proxy.
			"GOPRIVATE=github.com/ai-memory")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if imports := run("list", "-f", "{{.Imports}}", "."); strings.Contains(imports, "/sdk/wire") {
		t.Errorf("examples/notes imports the protocol, not only the SDK: %s", imports)
	}
	run("build", "-o", "ai-memory-notes", ".")
	info := run("version", "-m", "ai-memory-notes")
	if !regexp.MustCompile(`(?m)^\s+dep\s+github.com/ai-memory/ai-memory/sdk\s`).MatchString(info) {
		t.Errorf("the binary was not built against the SDK:\n%s", info)
	}
	if strings.Contains(info, "tiktoken") {
		t.Errorf("the notes binary links the tokenizer, which it never uses:\n%s", info)
	}
}

// copyNotes copies examples/notes as an author has it (go.mod, go.sum,
// main.go) into dir, with goModTail appended to its go.mod.
func copyNotes(t *testing.T, dir string, goModTail []byte) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		raw, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "notes", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "go.mod" {
			raw = append(raw, goModTail...)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
