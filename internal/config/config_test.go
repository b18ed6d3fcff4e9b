package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		p, src, err := ResolveProfile(tc.flag, c)
		if err != nil || p.Label() != tc.want || src != tc.source {
			t.Errorf("flag=%q env=%q: got %s from %s (%v), want %s from %s", tc.flag, tc.env, p.Label(), src, err, tc.want, tc.source)
		}
	}
	t.Setenv("AI_MEMORY_PROFILE", "")
	if p, _, _ := ResolveProfile("", Config{}); p.Label() != "core" {
		t.Errorf("default = %s, want core", p.Label())
	}
	if _, _, err := ResolveProfile("nope", c); err == nil || !strings.Contains(err.Error(), "--profile") {
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
