package project

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNamespaceFromRemoteFolderAndWorktree(t *testing.T) {
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "My Project")
	write(t, filepath.Join(repo, ".git", "config"), "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x/other.git\n[remote \"origin\"]\n\turl = git@github.com:Acme/Billing-API.git\n")
	sub := filepath.Join(repo, "cmd", "tool")
	os.MkdirAll(sub, 0o755)
	if ns, from, ok := Namespace(sub); !ok || ns != "billing-api" || from != "git remote origin git@github.com:Acme/Billing-API.git" {
		t.Errorf("remote: %q %q %v", ns, from, ok)
	}
	// No remote: the folder name, cleaned.
	write(t, filepath.Join(repo, ".git", "config"), "[core]\n")
	if ns, _, _ := Namespace(repo); ns != "my-project" {
		t.Errorf("folder: %q", ns)
	}
	// A linked worktree: .git is a file; the config is in the common dir.
	write(t, filepath.Join(repo, ".git", "config"), "[remote \"origin\"]\n\turl = https://git.example.com/team/_Search.git/\n")
	wt := filepath.Join(tmp, "wt")
	write(t, filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	if ns, _, _ := Namespace(wt); ns != "search" {
		t.Errorf("worktree: %q", ns)
	}
	if _, _, ok := Namespace(tmp); ok {
		t.Error("outside a work tree: ok")
	}
}
