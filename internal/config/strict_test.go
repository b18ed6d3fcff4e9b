package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRefusesUnknownSectionsAndKeys(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[storag]\nbackend = \"bbolt\"\n", "unknown key storag"},
		{"[mcp]\nprofil = \"core\"\n", "unknown key mcp.profil"},
		{"[ttl]\nshort_ttl = 5\n", "unknown key ttl.short_ttl"},
		{"[storage]\nbackend = \"sqlite\"\n", "[storage] backend: must be one of bbolt"},
		{"[ttl]\nmid_extend_secs = -1\n", "[ttl] mid_extend_secs: must be 0 or more"},
		{"[plugin_sandbox]\nenvs = []\n", "unknown key plugin_sandbox.envs"},
		{"[plugin_sandbox]\nenv = [\"HTTPS PROXY\"]\n", `[plugin_sandbox] env: "HTTPS PROXY" is not an environment variable name`},
		{"[plugin_sandbox]\nenv = [\"1X\"]\n", `[plugin_sandbox] env: "1X" is not`},
		{"[plugin_sandbox]\nread = [\"docs\"]\n", `[plugin_sandbox] read: "docs" must be an absolute path`},
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte(tc.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: err = %v, want %q naming the file", tc.toml, err, tc.want)
		}
	}
}

func TestLoadReadsEngineSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	body := "[mcp]\nprofile = \"graph\"\n[storage]\nbackend = \"bbolt\"\n[ttl]\nshort_ttl_secs = 60\n[plugin_sandbox]\nenv = [\"HTTPS_PROXY\"]\nread = [\"/srv/docs\"]\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.Profile != "graph" || *c.Storage.Backend != "bbolt" || *c.TTL.ShortTTLSecs != 60 ||
		len(c.PluginSandbox.Env) != 1 || c.PluginSandbox.Env[0] != "HTTPS_PROXY" || len(c.PluginSandbox.Read) != 1 || c.PluginSandbox.Read[0] != "/srv/docs" {
		t.Fatalf("config = %+v", c)
	}
}
