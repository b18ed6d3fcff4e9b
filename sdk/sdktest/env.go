package sdktest

import (
	"os"
	"path/filepath"
	"strings"
)

// engineEnv is the environment of the ai-memory processes a test starts
// under root: the test's own, without a local embedding model (neither
// AI_MEMORY_MODEL_DIR nor the user's model cache), so a family's tests see
// the same keyword recall on every machine, CI's included.
func engineEnv(root string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AI_MEMORY_MODEL_DIR=") && !strings.HasPrefix(kv, "XDG_CACHE_HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "XDG_CACHE_HOME="+filepath.Join(root, "cache"))
	return append(env, extra...)
}
