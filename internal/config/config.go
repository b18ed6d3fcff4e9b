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
	"github.com/ai-memory/ai-memory/sdk"
)

// Config is the subset of config.toml the host reads.
type Config struct {
	MCP struct {
		Profile string `toml:"profile"`
		// Namespace is the default namespace of memories a call does not
		// place ("" : the project's, else global).
		Namespace string `toml:"namespace"`
		// Allowlist maps agent-id patterns to the families (or profiles) they may use.
		Allowlist map[string][]string `toml:"allowlist"`
		// RedactedDiscovery shows an identity only the families it is cleared for.
		RedactedDiscovery bool `toml:"redacted_discovery"`
		// ExpansionInterval spaces an identity's new families when an
		// allowlist is set ("5m" default, "0" off).
		ExpansionInterval string `toml:"expansion_interval"`
		// MaxMessageBytes bounds one MCP message on stdio (0: the host's
		// default, 1 MiB; see mcphost.DefaultMaxMessageBytes).
		MaxMessageBytes int `toml:"max_message_bytes"`
		// CallTimeout bounds one tool call; a plugin that does not answer in
		// time is replaced ("60s" default).
		CallTimeout string `toml:"call_timeout"`
		// Attestation names, per family (or profile), the least attestation
		// an HTTP principal needs to use it: none, token, oauth or mtls.
		Attestation map[string]string `toml:"attestation"`
	} `toml:"mcp"`
	// Plugins pins extra plugin binaries: path → SHA-256 hex.
	Plugins map[string]string `toml:"plugins"`
	// PluginSandbox widens what every plugin process gets beyond its
	// allow-listed environment and, where plugins run confined, beyond the
	// system's readable paths (docs/plugins.md, "What a plugin can reach").
	PluginSandbox struct {
		// Env names host environment variables passed on to plugins.
		Env []string `toml:"env"`
		// Read names absolute paths plugins may read; the data dir, the
		// config dir and key files stay out even below one of them.
		Read []string `toml:"read"`
	} `toml:"plugin_sandbox"`
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
	if err == nil {
		err = c.validatePluginSandbox()
	}
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

func (c Config) validatePluginSandbox() error {
	for _, name := range c.PluginSandbox.Env {
		if !envName(name) {
			return fmt.Errorf("[plugin_sandbox] env: %s is not an environment variable name (letters, digits and _, not starting with a digit)", sdk.Quote(name))
		}
	}
	for _, p := range c.PluginSandbox.Read {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("[plugin_sandbox] read: %s must be an absolute path", sdk.Quote(p))
		}
	}
	return nil
}

func envName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// ExpansionInterval is [mcp].expansion_interval, default 5 minutes.
func (c Config) ExpansionInterval() (time.Duration, error) {
	if c.MCP.ExpansionInterval == "" {
		return 5 * time.Minute, nil
	}
	d, err := time.ParseDuration(c.MCP.ExpansionInterval)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("[mcp] expansion_interval: must be a duration such as \"5m\" or \"0\" (got %s)", sdk.Quote(c.MCP.ExpansionInterval))
	}
	return d, nil
}

// MinMessageBytes is the smallest [mcp].max_message_bytes accepted: below
// it even initialize may not fit.
const MinMessageBytes = 4096

// MaxMessageBytes is [mcp].max_message_bytes; 0 means the host's default.
func (c Config) MaxMessageBytes() (int, error) {
	if n := c.MCP.MaxMessageBytes; n != 0 && n < MinMessageBytes {
		return 0, fmt.Errorf("[mcp] max_message_bytes: must be at least %d (got %d); leave it out for the default of 1 MiB", MinMessageBytes, n)
	}
	return c.MCP.MaxMessageBytes, nil
}

// CallTimeout is [mcp].call_timeout; 0 means the supervisor's default.
func (c Config) CallTimeout() (time.Duration, error) {
	if c.MCP.CallTimeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(c.MCP.CallTimeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("[mcp] call_timeout: must be a positive duration such as \"60s\" (got %s)", sdk.Quote(c.MCP.CallTimeout))
	}
	return d, nil
}

// ResolveProfile applies the precedence flag > AI_MEMORY_PROFILE > config >
// core. The first layer that is set is parsed against the profile grammar;
// an empty env value is unset. It returns the request (resolved against the
// installed families once the plugins have described themselves) and which
// layer chose it.
func ResolveProfile(flag string, c Config) (catalog.Request, string, error) {
	source, value := "default", ""
	switch {
	case flag != "":
		source, value = "--profile", flag
	case os.Getenv("AI_MEMORY_PROFILE") != "":
		source, value = "AI_MEMORY_PROFILE", os.Getenv("AI_MEMORY_PROFILE")
	case c.MCP.Profile != "":
		source, value = "config [mcp].profile", c.MCP.Profile
	}
	r, err := catalog.ParseRequest(value)
	if err != nil {
		return catalog.Request{}, source, fmt.Errorf("%s: %w", source, err)
	}
	return r, source, nil
}
