package guard

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/catalog"
)

func TestAllowlistMatrix(t *testing.T) {
	a, err := NewAllowlist(map[string][]string{
		"alice":          {"core", "graph"},
		"ai:":            {"core"},
		"ai:claude-code": {"full"},
		"ops-":           {"admin"},
		"*":              {"core", "archive"},
	}, catalog.Contract())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		agent, family string
		allowed       bool
		rule          string
	}{
		{"alice", "graph", true, "alice"},  // exact
		{"alice", "power", false, "alice"}, // exact row lacks it
		{"alice2", "graph", true, "alice"}, // a key is a plain prefix: "alice" covers "alice2"
		{"bob", "graph", false, "*"},
		{"ai:claude-code", "power", true, "ai:claude-code"},   // full
		{"ai:claude-code-x", "graph", true, "ai:claude-code"}, // longest prefix wins
		{"ai:codex", "graph", false, "ai:"},                   // shorter prefix
		{"ai:codex", "core", true, "ai:"},
		{"ops-bob", "governance", true, "ops-"}, // profile name expanded
		{"ops-bob", "lifecycle", true, "ops-"},
		{"stranger", "archive", true, "*"}, // wildcard
		{"stranger", "graph", false, "*"},
		{"", "core", true, "*"},
	}
	for _, c := range cases {
		d := a.Decide(c.agent, c.family)
		if d.Allowed != c.allowed || d.Rule != c.rule {
			t.Errorf("Decide(%q, %q) = %+v, want allowed=%v rule=%q", c.agent, c.family, d, c.allowed, c.rule)
		}
	}

	noWildcard, _ := NewAllowlist(map[string][]string{"alice": {"graph"}}, catalog.Contract())
	if d := noWildcard.Decide("bob", "core"); d.Allowed {
		t.Error("without a * row an unknown agent must be denied, core included")
	}
	if d := noWildcard.Decide("alice", "core"); d.Allowed {
		t.Error("a row listing only graph allows only graph")
	}
	if d := (Allowlist{}).Decide("anyone", "power"); !d.Allowed {
		t.Error("no table must allow everything")
	}
	if got := a.Allowed("alice"); !slices.Equal(got, []string{"core", "graph"}) {
		t.Errorf("Allowed(alice) = %v", got)
	}
}

func TestAllowlistRejectsUnknownNames(t *testing.T) {
	_, err := NewAllowlist(map[string][]string{"bob": {"core", "grpah"}}, catalog.Contract())
	if err == nil || !strings.Contains(err.Error(), `"grpah"`) || !strings.Contains(err.Error(), `"bob"`) {
		t.Fatalf("error = %v", err)
	}
	// A plugin's family is a valid name once the plugin has described itself.
	if _, err := NewAllowlist(map[string][]string{"bob": {"echo"}}, catalog.Contract()); err == nil {
		t.Fatal("a family no plugin declares was accepted")
	}
	set, _ := catalog.NewSet([]catalog.Declaration{{Plugin: "echo", Families: []catalog.DeclaredFamily{{Name: "echo", Tools: []string{"test_echo"}}}}})
	a, err := NewAllowlist(map[string][]string{"bob": {"echo"}, "ops": {"full"}}, set)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Decide("bob", "echo").Allowed || a.Decide("bob", "core").Allowed || !a.Decide("ops", "echo").Allowed {
		t.Errorf("third-party family rows: %v", a.rows)
	}
	if got := a.Allowed("ops"); !slices.Contains(got, "echo") || !slices.Contains(got, "other") {
		t.Errorf("Allowed(ops) = %v", got)
	}
}

func TestRateLimit(t *testing.T) {
	now := time.Unix(0, 0)
	r := NewRateLimit(5*time.Minute, func() time.Time { return now })
	if ok, _ := r.Take("a"); !ok {
		t.Fatal("first expansion denied")
	}
	if ok, wait := r.Take("a"); ok || wait != 5*time.Minute {
		t.Fatalf("second expansion at once: ok=%v wait=%v", ok, wait)
	}
	if ok, _ := r.Take("b"); !ok {
		t.Fatal("limit must be per identity")
	}
	now = now.Add(5 * time.Minute)
	if ok, _ := r.Take("a"); !ok {
		t.Fatal("expansion after the interval denied")
	}
	if ok, _ := NewRateLimit(0, nil).Take("a"); !ok {
		t.Fatal("zero interval must disable the limit")
	}
}

// A credential's families are intersected with the table, and limit an
// identity even with no table.
func TestAllowlistWithinCredential(t *testing.T) {
	a, err := NewAllowlist(map[string][]string{"alice": {"core", "graph"}}, catalog.Contract())
	if err != nil {
		t.Fatal(err)
	}
	w := a.Within([]string{"core", "power"})
	for fam, want := range map[string]Decision{
		"core":  {Allowed: true, Rule: "alice"},
		"graph": {Allowed: false, Rule: CredentialRule}, // the table allows, the token does not
		"power": {Allowed: false, Rule: "alice"},        // the token grants, the table does not
	} {
		if got := w.Decide("alice", fam); got != want {
			t.Errorf("Decide(alice, %s) = %+v, want %+v", fam, got, want)
		}
	}
	none := Allowlist{}.Within([]string{"core"})
	if !none.Enabled() || none.Decide("x", "graph").Allowed || !none.Decide("x", "core").Allowed {
		t.Error("a credential limit without a table must still limit")
	}
	if a.Within(nil).Decide("alice", "graph") != a.Decide("alice", "graph") {
		t.Error("Within(nil) must change nothing")
	}
}
