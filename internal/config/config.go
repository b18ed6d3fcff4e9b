// Package config finds and reads ai-memory's config.toml and data dir, and
// resolves the active profile (CLI flag > AI_MEMORY_PROFILE > [mcp].profile > core).
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
)

// Config is the subset of config.toml the host reads.
type Config struct {
	MCP struct {
		Profile string `toml:"profile"`
		// Allowlist maps agent-id patterns to the families (or profiles) they may use.
		Allowlist map[string][]string `toml:"allowlist"`
		// RedactedDiscovery shows an identity only the families it is cleared for.
		RedactedDiscovery bool `toml:"redacted_discovery"`
		// ExpansionInterval spaces an identity's new families when an
		// allowlist is set ("5m" default, "0" off).
		ExpansionInterval string `toml:"expansion_interval"`
	} `toml:"mcp"`
	// Plugins pins extra plugin binaries: path → SHA-256 hex.
	Plugins map[string]string `toml:"plugins"`
	// The engine-scoped sections ([storage], [ttl]): recorded in the data
	// dir by the first host, and only compared by later ones.
	settings.Settings
}

// Path is where config.toml is read from: flag > AI_MEMORY_CONFIG >
// $XDG_CONFIG_HOME/ai-memory/config.toml > ~/.config/ai-memory/config.toml.
func Path(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("AI_MEMORY_CONFIG"); env != "" {
		return env
	}
	return filepath.Join(xdgDir("XDG_CONFIG_HOME", ".config"), "ai-memory", "config.toml")
}

// DataDir is where memory lives: flag > AI_MEMORY_DATA_DIR >
// $XDG_DATA_HOME/ai-memory > ~/.local/share/ai-memory.
func DataDir(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("AI_MEMORY_DATA_DIR"); env != "" {
		return env
	}
	return filepath.Join(xdgDir("XDG_DATA_HOME", filepath.Join(".local", "share")), "ai-memory")
}

func xdgDir(env, fallback string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return filepath.Join(home, fallback)
}

// Load reads a config file. A missing file is an empty config; a malformed
// one, or one with a section or key this version does not know (a typo
// would otherwise be silently ignored), is an error naming the file and the
// problem.
func Load(path string) (Config, error) {
	var c Config
	md, err := toml.DecodeFile(path, &c)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err == nil {
		err = settings.Undecoded(md)
	}
	if err == nil {
		err = c.Settings.Validate()
	}
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// ExpansionInterval is [mcp].expansion_interval, default 5 minutes.
func (c Config) ExpansionInterval() (time.Duration, error) {
	if c.MCP.ExpansionInterval == "" {
		return 5 * time.Minute, nil
	}
	d, err := time.ParseDuration(c.MCP.ExpansionInterval)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("[mcp] expansion_interval: must be a duration such as \"5m\" or \"0\" (got %q)", c.MCP.ExpansionInterval)
	}
	return d, nil
}

// ResolveProfile applies the precedence flag > AI_MEMORY_PROFILE > config >
// core. The first layer that is set is parsed; an empty env value is unset.
// It returns the profile and which layer chose it.
func ResolveProfile(flag string, c Config) (catalog.Profile, string, error) {
	source, value := "default", ""
	switch {
	case flag != "":
		source, value = "--profile", flag
	case os.Getenv("AI_MEMORY_PROFILE") != "":
		source, value = "AI_MEMORY_PROFILE", os.Getenv("AI_MEMORY_PROFILE")
	case c.MCP.Profile != "":
		source, value = "config [mcp].profile", c.MCP.Profile
	}
	p, err := catalog.ParseProfile(value)
	if err != nil {
		return catalog.Profile{}, source, fmt.Errorf("%s: %w", source, err)
	}
	return p, source, nil
}
