package settings

import (
	"strings"
	"testing"
	"time"
)

func TestGovernanceSettings(t *testing.T) {
	s, err := Parse([]byte(`[governance]
operators = ["ai:op"]
default_policy = '{"write":"any","delete":"owner"}'
pending_ttl_secs = 3600
[governance.owners]
"team/a" = "ai:alice"
"*" = "ai:root"
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Governance.Config()
	if err != nil || !c.IsOperator("ai:op") || c.PendingFor() != time.Hour || c.DefaultPolicy().Delete != "owner" {
		t.Fatalf("config %+v, %v", c, err)
	}
	if o, ok := c.ConfiguredOwner("team/a"); !ok || o != "ai:alice" {
		t.Errorf("owner of team/a: %q %v", o, ok)
	}
	for doc, want := range map[string]string{
		"[governance]\noperators = [\"has space\"]":   "[governance] operators[0]",
		"[governance]\ndefault_policy = '{}'":         "[governance] default_policy: governance.write: is required",
		"[governance]\npending_ttl_secs = 0":          "[governance] pending_ttl_secs: must be from 1",
		"[governance.owners]\n\"a//b\" = \"ai:x\"":    "[governance.owners]",
		"[governance]\nowner = \"ai:x\"":              "unknown key governance.owner",
		"[governance.owners]\n\"team\" = \"not ok!\"": "[governance.owners]",
	} {
		if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
	host, _ := Parse([]byte("[governance]\noperators = [\"ai:other\"]\n"))
	if d := Differ(host, s); strings.Join(d, ",") != "governance.operators" {
		t.Errorf("differ: %v", d)
	}
}
