// Package project finds the git work tree a process runs in and the
// default namespace derived from it, so memories a harness stores inside a
// project land in that project's namespace rather than in global.
package project

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// Root is the git work tree around dir: the nearest parent holding .git (a
// directory, or a file in a linked worktree or submodule).
func Root(dir string) (string, bool) {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// Namespace is the default namespace of the project around dir: the name
// of its origin remote's repository, else its root folder's name, made a
// valid flat namespace. ok is false outside a git work tree; from says
// where the name came from.
func Namespace(dir string) (ns, from string, ok bool) {
	root, ok := Root(dir)
	if !ok {
		return "", "", false
	}
	if url := originURL(root); url != "" {
		if ns := clean(repoName(url)); ns != "" {
			return ns, "git remote origin " + url, true
		}
	}
	if ns := clean(filepath.Base(root)); ns != "" {
		return ns, "project folder " + root, true
	}
	return "", "", false
}

// repoName is the last path element of a remote URL, without .git:
// git@github.com:acme/api.git, https://host/acme/api and /srv/git/api.git
// all name "api".
func repoName(url string) string {
	url = strings.TrimRight(url, "/")
	url = strings.TrimSuffix(url, ".git")
	if i := strings.LastIndexAny(url, "/:"); i >= 0 {
		url = url[i+1:]
	}
	return url
}

// clean lowercases name and keeps letters, digits, '.', '_' and '-' (any
// other run becomes one '-'); a leading '_' is dropped, since namespaces
// beginning with '_' are the engine's own.
func clean(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-_.")
	if len(s) > 64 {
		s = strings.Trim(s[:64], "-_.")
	}
	return s
}

// originURL reads remote "origin"'s url from the repository's config; a
// linked worktree's .git file points at its git dir, whose commondir holds
// the shared config.
func originURL(root string) string {
	gitDir := filepath.Join(root, ".git")
	if st, err := os.Stat(gitDir); err == nil && !st.IsDir() {
		b, err := os.ReadFile(gitDir)
		if err != nil {
			return ""
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return ""
		}
		gitDir = strings.TrimSpace(p)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(root, gitDir)
		}
		if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			common := strings.TrimSpace(string(c))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitDir, common)
			}
			gitDir = common
		}
	}
	f, err := os.Open(filepath.Join(gitDir, "config"))
	if err != nil {
		return ""
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			in = line == `[remote "origin"]`
			continue
		}
		if k, v, ok := strings.Cut(line, "="); in && ok && strings.TrimSpace(k) == "url" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
