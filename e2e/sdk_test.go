package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTypeScriptSDK runs sdk/typescript's own tests (`npm test`: compile,
// then node --test) against the built binaries.
func TestTypeScriptSDK(t *testing.T) {
	dir := filepath.Join(repoRoot(), "sdk", "typescript")
	npm, err := exec.LookPath("npm")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "typescript")); err != nil || serr != nil {
		needInCI(t, "npm and `npm ci --prefix sdk/typescript`")
	}
	cmd := commandWithin(t, toolDeadline, npm, "test", "--silent")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AI_MEMORY_TEST_BIN="+bins)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm test in sdk/typescript: %v\n%s", err, out)
	}
}

// TestPythonSDK runs sdk/python's tests with the standard-library client
// (no dependency: CI has no Python registry) against the built binaries.
func TestPythonSDK(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		needInCI(t, "python3")
	}
	dir := filepath.Join(repoRoot(), "sdk", "python")
	cmd := commandWithin(t, toolDeadline, py, "-m", "unittest", "discover", "-s", "tests")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AI_MEMORY_TEST_BIN="+bins, "PYTHONPATH="+filepath.Join(dir, "src"), "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python SDK tests: %v\n%s", err, out)
	}
}
