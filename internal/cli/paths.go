package cli

import (
	"os"
	"path/filepath"
)

// pluginDir is where plugin binaries and their manifest live:
// AI_MEMORY_PLUGIN_DIR, else the directory of this binary.
func pluginDir() string {
	if d := os.Getenv("AI_MEMORY_PLUGIN_DIR"); d != "" {
		return d
	}
	return filepath.Dir(selfPath())
}

// selfPath is this binary's resolved path; hosts re-exec it as the engine.
func selfPath() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		return resolved
	}
	return exe
}

func parentDir(d string) string { return filepath.Dir(d) }
