package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectNamespace: a host started inside a git work tree stores into
// the project's namespace by default; --namespace, AI_MEMORY_NAMESPACE and
// an explicit argument override it; doctor shows it.
func TestProjectNamespace(t *testing.T) {
	e := newEnv(t)
	repo := filepath.Join(filepath.Dir(e.dataDir), "work", "billing")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "config"), []byte("[remote \"origin\"]\n\turl = git@github.com:acme/Billing-API.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.hostDir = filepath.Join(repo, "src") // a subfolder, as a harness opened there
	os.MkdirAll(e.hostDir, 0o755)

	h := e.startHost(nil)
	if m := h.ok("memory_store", map[string]any{"format": "json", "title": "a", "content": "in the project"}); m["namespace"] != "billing-api" {
		t.Errorf("default in a project: %v", m["namespace"])
	}
	if m := h.ok("memory_store", map[string]any{"format": "json", "title": "b", "content": "placed", "namespace": "global"}); m["namespace"] != "global" {
		t.Errorf("explicit namespace: %v", m["namespace"])
	}
	if m := e.startHost([]string{"--namespace", "team/x"}).ok("memory_store", map[string]any{"format": "json", "title": "c", "content": "flag"}); m["namespace"] != "team/x" {
		t.Errorf("--namespace: %v", m["namespace"])
	}
	if m := e.startHost(nil, "AI_MEMORY_NAMESPACE=envns").ok("memory_store", map[string]any{"format": "json", "title": "d", "content": "env"}); m["namespace"] != "envns" {
		t.Errorf("AI_MEMORY_NAMESPACE: %v", m["namespace"])
	}
	e.hostDir = ""
	if m := e.startHost(nil).ok("memory_store", map[string]any{"format": "json", "title": "e", "content": "outside"}); m["namespace"] != "global" {
		t.Errorf("outside a project: %v", m["namespace"])
	}

	cmd := command(t, filepath.Join(bins, "ai-memory"), "doctor")
	cmd.Env, cmd.Dir = e.environ(), repo
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "billing-api (from git remote origin git@github.com:acme/Billing-API.git") {
		t.Errorf("doctor:\n%s", out)
	}
	bad := command(t, filepath.Join(bins, "ai-memory"), "mcp", "--namespace", "_agents")
	bad.Env = e.environ()
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "engine's own") {
		t.Errorf("--namespace _agents: %v\n%s", err, out)
	}
}
