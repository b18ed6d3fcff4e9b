package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/project"
	"github.com/ai-memory/ai-memory/sdk/record"
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

// defaultNamespace resolves where memories go when a call names no
// namespace: --namespace > AI_MEMORY_NAMESPACE > [mcp].namespace > the
// project around the working directory > global.
func defaultNamespace(flag string, cfg config.Config) (ns, source string, err error) {
	switch {
	case flag != "":
		ns, source = flag, "--namespace"
	case os.Getenv("AI_MEMORY_NAMESPACE") != "":
		ns, source = os.Getenv("AI_MEMORY_NAMESPACE"), "AI_MEMORY_NAMESPACE"
	case cfg.MCP.Namespace != "":
		ns, source = cfg.MCP.Namespace, "config [mcp].namespace"
	default:
		if cwd, err := os.Getwd(); err == nil {
			if p, from, ok := project.Namespace(cwd); ok {
				return p, from, nil
			}
		}
		return record.DefaultNamespace, "default (not in a git work tree)", nil
	}
	if err := record.ValidateNamespace(source, ns); err != nil {
		return "", source, err
	}
	if strings.HasPrefix(ns, "_") {
		return "", source, fmt.Errorf("%s: namespaces beginning with '_' are the engine's own", source)
	}
	return ns, source, nil
}
