package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPinsKeepTheRestOfTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	orig := "# mine\n[mcp]\nprofile = \"core\" # keep\n\n[plugins]\n\"/opt/other\" = \"" + strings.Repeat("a", 64) + "\"\n\n[ttl]\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	sum1, sum2 := strings.Repeat("b", 64), strings.Repeat("c", 64)
	if err := SetPin(path, "/opt/notes", sum1); err != nil {
		t.Fatal(err)
	}
	if err := SetPin(path, "/opt/notes", sum2); err != nil { // re-pin replaces
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Plugins["/opt/notes"] != sum2 || c.Plugins["/opt/other"] != strings.Repeat("a", 64) || c.MCP.Profile != "core" || len(c.Plugins) != 2 {
		t.Fatalf("after pinning: %+v", c)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "# mine") || !strings.Contains(string(raw), "# keep") {
		t.Errorf("comments lost:\n%s", raw)
	}
	if found, err := RemovePin(path, "/opt/notes"); err != nil || !found {
		t.Fatalf("remove: %v %v", found, err)
	}
	if found, _ := RemovePin(path, "/opt/notes"); found {
		t.Error("removed twice")
	}
	if c, _ = Load(path); len(c.Plugins) != 1 {
		t.Errorf("after remove: %v", c.Plugins)
	}

	fresh := filepath.Join(t.TempDir(), "sub", "config.toml") // no file yet
	if err := SetPin(fresh, `/odd "path"`, sum1); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(fresh); err != nil || c.Plugins[`/odd "path"`] != sum1 {
		t.Fatalf("fresh file: %v %v", c.Plugins, err)
	}
}
