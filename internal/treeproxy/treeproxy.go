// Package treeproxy writes this checkout's Go modules as a module proxy
// directory (GOPROXY=file://DIR) at one version, as if the tags were
// pushed: what `go install .../cmd/ai-memory@vX` and `go get .../sdk@vX`
// would fetch once the release is published. The files are the working
// tree's that git would commit (tracked or not ignored), so a test of it
// sees uncommitted changes and never bin/, dist/ or node_modules/.
package treeproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// Published is the path prefix of the modules a release tags; the
// workspace's other modules (examples/notes) are not published.
const Published = "github.com/ai-memory/ai-memory"

// Module is one published module of the workspace.
type Module struct {
	Path string // module path
	Dir  string // directory, relative to the repository root ("." for the root)
}

// Modules lists the published modules of repo's go.work.
func Modules(repo string) ([]Module, error) {
	raw, err := os.ReadFile(filepath.Join(repo, "go.work"))
	if err != nil {
		return nil, err
	}
	work, err := modfile.ParseWork("go.work", raw, nil)
	if err != nil {
		return nil, err
	}
	var mods []Module
	for _, u := range work.Use {
		dir := filepath.Clean(u.Path)
		gomod, err := os.ReadFile(filepath.Join(repo, dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		p := modfile.ModulePath(gomod)
		if p == Published || strings.HasPrefix(p, Published+"/") {
			mods = append(mods, Module{Path: p, Dir: filepath.ToSlash(dir)})
		}
	}
	return mods, nil
}

// Build writes every published module of repo into out at version (vX.Y.Z):
// out/<escaped path>/@v/{list, vX.Y.Z.info, vX.Y.Z.mod, vX.Y.Z.zip}.
func Build(repo, out, version string) ([]Module, error) {
	mods, err := Modules(repo)
	if err != nil {
		return nil, err
	}
	files, err := treeFiles(repo)
	if err != nil {
		return nil, err
	}
	for _, m := range mods {
		if err := write(repo, out, version, m, files); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Path, err)
		}
	}
	return mods, nil
}

func write(repo, out, version string, m Module, files []string) error {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(repo, m.Dir, "go.mod"))
	if err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	var zipped bytes.Buffer
	// Create leaves out what a module zip never holds: nested modules
	// (their go.mod is among the files), vendor/, symlinks.
	if err := modzip.Create(&zipped, module.Version{Path: m.Path, Version: version}, moduleFiles(repo, m.Dir, files)); err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod, version + ".zip": zipped.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// treeFiles lists, relative to repo, the files git would commit: tracked
// or untracked but not ignored, and still present in the work tree.
func treeFiles(repo string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = repo
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", repo, err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00") {
		if _, err := os.Lstat(filepath.Join(repo, f)); err == nil {
			files = append(files, f)
		}
	}
	return files, nil
}

func moduleFiles(repo, dir string, files []string) []modzip.File {
	var out []modzip.File
	for _, f := range files {
		rel := f
		if dir != "." {
			var ok bool
			if rel, ok = strings.CutPrefix(f, dir+"/"); !ok {
				continue
			}
		}
		out = append(out, treeFile{rel: rel, abs: filepath.Join(repo, filepath.FromSlash(f))})
	}
	return out
}

// treeFile is one work-tree file as the module zip sees it.
type treeFile struct{ rel, abs string }

func (f treeFile) Path() string                 { return path.Clean(f.rel) }
func (f treeFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
