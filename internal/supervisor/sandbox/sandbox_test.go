package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A readable tree that holds a protected path is granted without it, as
// its other entries; a path inside a protected one is not granted at all;
// symlinks are resolved before comparing.
func TestReadableLeavesProtectedPathsOut(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/.ssh", "home/.config/ai-memory", "home/.config/other", "home/docs", "srv"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "home/notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "home/.config"), filepath.Join(root, "srv/cfg")); err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string { return filepath.Join(root, rel) }

	got := Readable([]string{p("home"), p("srv/cfg"), p("home/.config/ai-memory/x"), p("missing")}, []string{p("home/.config/ai-memory")})
	slices.Sort(got)
	want := []string{p("home/.config/other"), p("home/.config/other"), p("home/.ssh"), p("home/docs"), p("home/notes.txt")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Readable = %v\nwant %v", got, want)
	}
	if got := Readable([]string{p("srv")}, []string{p("home")}); !slices.Equal(got, []string{p("srv")}) {
		t.Errorf("an unrelated tree: %v", got)
	}
}

func TestPolicyRoundTrip(t *testing.T) {
	p := Policy{Binary: "/opt/p/plugin", SHA256: strings.Repeat("ab", 32), Read: []string{"/usr"}, Write: []string{"/tmp/x"}}
	args := p.Args()
	if args[0] != Command || len(args) != 2 {
		t.Fatalf("Args = %v", args)
	}
	got, err := ParsePolicy(args[1])
	if err != nil || got.Binary != p.Binary || got.SHA256 != p.SHA256 || !slices.Equal(got.Read, p.Read) || !slices.Equal(got.Write, p.Write) {
		t.Fatalf("ParsePolicy = %+v, %v", got, err)
	}
	for _, bad := range []string{"{", `{"binary":"rel","sha256":"` + p.SHA256 + `"}`, `{"binary":"/abs","sha256":"short"}`} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) accepted", bad)
		}
	}
}
