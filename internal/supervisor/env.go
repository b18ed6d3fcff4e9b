package supervisor

import (
	"os"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
)

// Sandbox is what plugin processes get beyond the defaults: more of the
// host's environment, and (where they run confined) more readable paths.
type Sandbox struct {
	Env  []string // names of host environment variables plugins receive
	Read []string // paths plugins may read
	// Protected are never readable by a plugin, even below a Read path or
	// a system directory: the data dir, the config dir, key files.
	Protected []string
}

// inherited are the host variables every plugin gets: what the sdk reads
// (besides the engine socket, which the supervisor sets), locale, PATH,
// HOME and TZ. Model keys, AI_MEMORY_POSTGRES_DSN and everything else stay
// with the host.
var inherited = []string{"PATH", "HOME", "TZ", "LANG", "LANGUAGE", "GOMAXPROCS",
	sdk.ProfileDirEnv, sdk.ProfileSecondsEnv, sdk.ProfileAfterEnv}

// pluginEnv is a plugin process's environment, from the host's: the
// allow-list, LC_* locale variables, the operator's extra names, the
// engine socket and the plugin's own temporary directory.
func pluginEnv(host []string, socket, tmp string, extra []string) []string {
	allowed := map[string]bool{}
	for _, n := range append(append([]string{}, inherited...), extra...) {
		allowed[n] = true
	}
	env := []string{sdk.EngineSocketEnv + "=" + socket, "TMPDIR=" + tmp}
	for _, kv := range host {
		name, _, _ := strings.Cut(kv, "=")
		if name == sdk.EngineSocketEnv || name == "TMPDIR" {
			continue // the plugin's own, set above
		}
		if allowed[name] || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	return env
}

// profileDir is where the sdk's profiling writes, if the host asks for it.
func profileDir() string { return os.Getenv(sdk.ProfileDirEnv) }
