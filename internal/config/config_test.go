package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/catalog"
)

func TestResolveProfilePrecedence(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("[mcp]\nprofile = \"power\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ flag, env, want, source string }{
		{"graph", "admin", "graph", "--profile"},
		{"", "admin", "admin", "AI_MEMORY_PROFILE"},
		{"", "", "power", "config [mcp].profile"},
	}
	for _, tc := range cases {
		t.Setenv("AI_MEMORY_PROFILE", tc.env)
		r, src, err := ResolveProfile(tc.flag, c)
		p, _ := r.Resolve(catalog.Contract())
		if err != nil || p.Label() != tc.want || src != tc.source {
			t.Errorf("flag=%q env=%q: got %s from %s (%v), want %s from %s", tc.flag, tc.env, p.Label(), src, err, tc.want, tc.source)
		}
	}
	t.Setenv("AI_MEMORY_PROFILE", "")
	if r, _, _ := ResolveProfile("", Config{}); !r.Mentions("core") || r.Mentions("graph") {
		t.Errorf("default = %+v, want core", r)
	}
	if _, _, err := ResolveProfile("Nope", c); err == nil || !strings.Contains(err.Error(), "--profile") {
		t.Errorf("bad flag error = %v", err)
	}
}

func TestLoadMissingAndMalformed(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "absent.toml")); err != nil {
		t.Fatalf("missing config: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[mcp\nprofile="), 0o600)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("malformed config error = %v", err)
	}
}

func TestMessageLimitAndCallTimeout(t *testing.T) {
	var c Config
	if n, err := c.MaxMessageBytes(); n != 0 || err != nil {
		t.Errorf("default max_message_bytes = %d, %v", n, err)
	}
	if d, err := c.CallTimeout(); d != 0 || err != nil {
		t.Errorf("default call_timeout = %v, %v", d, err)
	}
	c.MCP.MaxMessageBytes, c.MCP.CallTimeout = 2<<20, "90s"
	if n, err := c.MaxMessageBytes(); n != 2<<20 || err != nil {
		t.Errorf("max_message_bytes = %d, %v", n, err)
	}
	if d, err := c.CallTimeout(); d != 90*time.Second || err != nil {
		t.Errorf("call_timeout = %v, %v", d, err)
	}
	c.MCP.MaxMessageBytes, c.MCP.CallTimeout = 100, "-1s"
	if _, err := c.MaxMessageBytes(); err == nil || !strings.Contains(err.Error(), "max_message_bytes: must be at least 4096") {
		t.Errorf("tiny max_message_bytes: %v", err)
	}
	if _, err := c.CallTimeout(); err == nil || !strings.Contains(err.Error(), "call_timeout") {
		t.Errorf("negative call_timeout: %v", err)
	}
}
