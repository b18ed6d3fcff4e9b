package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestConformanceSuiteOverHTTP runs the MCP conformance suite
// (@modelcontextprotocol/conformance, server mode) against `ai-memory
// serve`. The suite's client sends no credentials, so the server runs
// with --auth none on loopback: these are the protocol-level scenarios;
// authentication has its own tests (http_test.go). Scenarios that do not
// apply are listed, each with its reason, in expected-failures.yml, and the
// suite fails on any other failure and on a listed scenario that passes.
func TestConformanceSuiteOverHTTP(t *testing.T) {
	dir := filepath.Join(repoRoot(), "e2e", "conformance")
	node, err := exec.LookPath("node")
	bin := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, serr := os.Stat(bin); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node and `npm ci --prefix e2e/conformance` are required in CI (node: %v, suite: %v)", err, serr)
		}
		t.Skip("needs node and `npm ci --prefix e2e/conformance`")
	}
	e := newEnv(t)
	s := e.serve("--auth", "none")
	cmd := commandWithin(t, toolDeadline, node, bin, "server", "--url", s.url, "--expected-failures", filepath.Join(dir, "expected-failures.yml"),
		"-o", t.TempDir())
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance suite: %v\n%s\nserver stderr:\n%s", err, out, s.stderr.String())
	}
	t.Logf("%s", out[max(0, len(out)-1500):])
}
