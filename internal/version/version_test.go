package version

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"

	"golang.org/x/mod/modfile"
)

func TestResolve(t *testing.T) {
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	for _, c := range []struct {
		name, build string
		info        *debug.BuildInfo
		want        string
	}{
		{"make build at the tag", "release", nil, Number},
		{"make build elsewhere", "dev+0123456789ab.dirty", nil, Number + "-dev+0123456789ab.dirty"},
		{"go install at the tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v" + Number}}, Number},
		{"go build at the tag, with changes", "", &debug.BuildInfo{Main: debug.Module{Version: "v" + Number + "+dirty"}}, Number + "+dirty"},
		{"go install of a later commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v" + Number + "-0.20261201000000-0123456789ab"}}, Number + "-dev"},
		{"go build in a checkout", "", vcs("0123456789abcdef0123", "false"), Number + "-dev+0123456789ab"},
		{"go build with changes", "", vcs("0123456789abcdef0123", "true"), Number + "-dev+0123456789ab.dirty"},
		{"no build info", "", nil, Number + "-dev"},
	} {
		if got := resolve(c.build, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionsAgree: everything that carries the release number carries
// Number (docs/releasing.md lists them), and the SDK packages ship the
// repository's licence.
func TestVersionsAgree(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(rel string) []byte {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	expect := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %q, want %q (internal/version.Number)", what, got, want)
		}
	}
	match := func(rel, pattern string) string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindSubmatch(read(rel))
		if m == nil {
			t.Fatalf("%s: nothing matches %s", rel, pattern)
		}
		return string(m[1])
	}

	var pkg struct{ Version string }
	if err := json.Unmarshal(read("sdk/typescript/package.json"), &pkg); err != nil {
		t.Fatal(err)
	}
	expect("sdk/typescript/package.json", pkg.Version, Number)
	var lock struct {
		Version  string
		Packages map[string]struct{ Version string }
	}
	if err := json.Unmarshal(read("sdk/typescript/package-lock.json"), &lock); err != nil {
		t.Fatal(err)
	}
	expect("sdk/typescript/package-lock.json", lock.Version, Number)
	expect(`sdk/typescript/package-lock.json packages[""]`, lock.Packages[""].Version, Number)
	expect("sdk/typescript/src/version.ts", match("sdk/typescript/src/version.ts", `VERSION = "([^"]+)"`), Number)
	expect("sdk/python/pyproject.toml", match("sdk/python/pyproject.toml", `(?m)^version = "([^"]+)"`), Number)
	expect("sdk/python/src/ai_memory/_version.py", match("sdk/python/src/ai_memory/_version.py", `__version__ = "([^"]+)"`), Number)
	expect("CHANGELOG.md's newest release", match("CHANGELOG.md", `(?m)^## \[(\d[^\]]*)\]`), Number)

	// The modules require each other at vNumber; go.work maps exactly those.
	for _, dir := range []string{".", "sdk", "examples/notes"} {
		rel := filepath.Join(dir, "go.mod")
		f, err := modfile.Parse(rel, read(rel), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Require {
			if regexp.MustCompile(`^github\.com/ai-memory/ai-memory(/|$)`).MatchString(r.Mod.Path) {
				expect(rel+" requires "+r.Mod.Path, r.Mod.Version, "v"+Number)
			}
		}
		if len(f.Replace) > 0 {
			t.Errorf("%s replaces %v: go install ...@version refuses a module that does; go.work maps the local copies", rel, f.Replace[0].Old)
		}
	}
	work, err := modfile.ParseWork("go.work", read("go.work"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range work.Replace {
		expect("go.work replaces "+r.Old.Path, r.Old.Version, "v"+Number)
	}

	licence := read("LICENSE")
	for _, copy := range []string{"sdk/typescript/LICENSE", "sdk/python/LICENSE"} {
		if !bytes.Equal(read(copy), licence) {
			t.Errorf("%s differs from LICENSE", copy)
		}
	}
}
