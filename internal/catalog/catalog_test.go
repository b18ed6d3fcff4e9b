package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestContractHasEveryToolOnce(t *testing.T) {
	set := Contract()
	total := 0
	seen := map[string]string{}
	for _, f := range FirstParty() {
		for _, tool := range set.ToolsOf(f) {
			if prev, dup := seen[tool]; dup {
				t.Fatalf("%s is in %s and %s", tool, prev, f)
			}
			seen[tool] = f
			if set.FamilyOf(tool) != f {
				t.Fatalf("FamilyOf(%s) = %q, want %q", tool, set.FamilyOf(tool), f)
			}
			total++
		}
	}
	if total != 43 {
		t.Fatalf("contract has %d tools, want 43", total)
	}
	if set.FamilyOf("memory_nope") != "" {
		t.Fatal("unknown tool mapped to a family")
	}
	for _, r := range BurstRules {
		if set.FamilyOf(r.Tool) == "" || !set.Has(r.Suggest) || r.Count < 2 || r.Window <= 0 {
			t.Errorf("burst rule %+v names an unknown tool or family", r)
		}
	}
}

func TestFamilyNameGrammar(t *testing.T) {
	for name, ok := range map[string]bool{"echo": true, "my-family2": true, "ab": true, strings.Repeat("a", 32): true,
		"a": false, "Echo": false, "2fa": false, "-x": false, "a_b": false, "": false, strings.Repeat("a", 33): false, "é-x": false} {
		if ValidFamilyName(name) != ok {
			t.Errorf("ValidFamilyName(%q) = %v, want %v", name, !ok, ok)
		}
	}
}

var (
	corePlugin  = Declaration{Plugin: "ai-memory-core", FirstParty: true, Families: []DeclaredFamily{{"core", []string{"memory_store", "memory_recall", "memory_list", "memory_get", "memory_search"}}}}
	graphPlugin = Declaration{Plugin: "ai-memory-graph", FirstParty: true, Families: []DeclaredFamily{{"graph", []string{"memory_link", "memory_kg_query"}}}}
	echoPlugin  = Declaration{Plugin: "echo", Families: []DeclaredFamily{{"echo", []string{"test_echo"}}}}
)

func third(plugin, family string, tools ...string) Declaration {
	return Declaration{Plugin: plugin, Families: []DeclaredFamily{{family, tools}}}
}

func TestNewSetAcceptsAndOrders(t *testing.T) {
	set, refused := NewSet([]Declaration{echoPlugin, third("zeta", "zeta", "z_one", "z_two"), corePlugin, third("alpha", "alpha", "a_one"), graphPlugin})
	if len(refused) != 0 {
		t.Fatalf("refused %v", refused)
	}
	want := append(FirstParty(), "alpha", "echo", "zeta")
	if !slices.Equal(set.Families(), want) {
		t.Fatalf("families = %v, want %v", set.Families(), want)
	}
	if got := set.ToolsOf("graph"); !slices.Equal(got, []string{"memory_link", "memory_kg_query"}) {
		t.Errorf("installed graph tools = %v (want the declared ones)", got)
	}
	if got := set.ToolsOf("archive"); !slices.Contains(got, "memory_archive_purge") || set.Installed("archive") {
		t.Errorf("archive (not installed) = %v", got)
	}
	if set.FamilyOf("z_two") != "zeta" || set.Plugin("zeta") != "zeta" || !set.Installed("echo") {
		t.Error("third-party family not mapped")
	}
	// A contract tool its installed family does not declare stays reserved.
	if set.FamilyOf("memory_kg_timeline") != "graph" {
		t.Error("undeclared contract tool lost its family")
	}
}

func TestNewSetRefusals(t *testing.T) {
	cases := []struct {
		name    string
		decls   []Declaration
		refused map[string][]string // plugin → phrases its reason must contain
	}{
		{"pinned plugin declares a core tool", []Declaration{corePlugin, third("evil", "evil", "memory_store", "evil_x")},
			map[string][]string{"evil": {`"memory_store"`, "core family"}}},
		{"core tool declared under --profile full with no core plugin installed", []Declaration{third("evil", "evil", "memory_store")},
			map[string][]string{"evil": {`"memory_store"`, "core family"}}},
		{"third party takes a first-party family", []Declaration{graphPlugin, third("fake-graph", "graph", "g_x")},
			map[string][]string{"fake-graph": {`family "graph"`, "first-party"}}},
		{"third party takes an uninstalled first-party family", []Declaration{third("mine", "other", "o_x")},
			map[string][]string{"mine": {`family "other"`, "first-party"}}},
		{"two third parties declare one new family", []Declaration{third("a", "dup", "a_x"), third("b", "dup", "b_x"), echoPlugin},
			map[string][]string{"a": {`family "dup"`, "plugin b declares too"}, "b": {`family "dup"`, "plugin a declares too"}}},
		{"two third parties declare one tool", []Declaration{third("a", "fa", "same"), third("b", "fb", "same")},
			map[string][]string{"a": {`tool "same"`, "plugin b"}, "b": {`tool "same"`, "plugin a"}}},
		{"first party wins a new name", []Declaration{{Plugin: "fp", FirstParty: true, Families: []DeclaredFamily{{"extra", []string{"x_tool"}}}}, third("tp", "extra", "y_tool")},
			map[string][]string{"tp": {`family "extra"`, "first-party plugin fp"}}},
		{"contract tool in the wrong family, even first-party", []Declaration{{Plugin: "fp", FirstParty: true, Families: []DeclaredFamily{{"graph", []string{"memory_store"}}}}},
			map[string][]string{"fp": {`"memory_store" in family "graph"`, "core family"}}},
		{"the host's own tool", []Declaration{third("t", "tt", "memory_capabilities")},
			map[string][]string{"t": {`"memory_capabilities"`, "host serves itself"}}},
		{"profile name as family", []Declaration{third("t", "admin", "x"), third("u", "full", "y")},
			map[string][]string{"t": {`"admin"`}, "u": {`"full"`}}},
		{"malformed names", []Declaration{third("t", "Bad", "x"), third("u", "fine", "bad tool"), third("v", "nothing")},
			map[string][]string{"t": {`"Bad"`, FamilyNameRule}, "u": {`"bad tool"`, ToolNameRule}, "v": {"no tools"}}},
		{"a long bad name is quoted short", []Declaration{third("t", strings.Repeat("X", 5000), "x")},
			map[string][]string{"t": {"(5000 bytes)"}}},
	}
	for _, c := range cases {
		// Every order of the same declarations gives the same answer.
		for _, order := range permutations(len(c.decls)) {
			decls := make([]Declaration, len(order))
			for i, j := range order {
				decls[i] = c.decls[j]
			}
			set, refused := NewSet(decls)
			got := map[string]string{}
			for _, r := range refused {
				got[r.Plugin] = r.Error()
			}
			if len(got) != len(c.refused) {
				t.Errorf("%s %v: refused %v, want %v", c.name, order, got, c.refused)
				continue
			}
			for plugin, phrases := range c.refused {
				if !strings.Contains(got[plugin], "plugin "+plugin+" refused") {
					t.Errorf("%s: %s not refused: %v", c.name, plugin, got)
				}
				for _, ph := range phrases {
					if !strings.Contains(got[plugin], ph) {
						t.Errorf("%s: refusal of %s = %q, want it to contain %q", c.name, plugin, got[plugin], ph)
					}
				}
				if len(got[plugin]) > 400 {
					t.Errorf("%s: refusal is %d bytes", c.name, len(got[plugin]))
				}
			}
			for _, d := range decls {
				if _, bad := c.refused[d.Plugin]; bad {
					for _, f := range d.Families {
						if set.Plugin(f.Name) == d.Plugin {
							t.Errorf("%s: refused plugin %s still serves %s", c.name, d.Plugin, f.Name)
						}
					}
				} else if set.Plugin(d.Families[0].Name) != d.Plugin {
					t.Errorf("%s: accepted plugin %s does not serve %s", c.name, d.Plugin, d.Families[0].Name)
				}
			}
			if set.FamilyOf("memory_store") != "core" {
				t.Errorf("%s: memory_store moved to %q", c.name, set.FamilyOf("memory_store"))
			}
		}
	}
}

func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(slices.Clone(p[:i]), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

func TestParseProfile(t *testing.T) {
	set, _ := NewSet([]Declaration{corePlugin, echoPlugin, third("x", "dup", "d1"), third("y", "dup", "d2")})
	all := append(FirstParty(), "echo")
	cases := []struct {
		in   string
		want []string
		err  string
	}{
		{"", []string{"core"}, ""},
		{"   ", []string{"core"}, ""},
		{",,,", []string{"core"}, ""},
		{"core,core", []string{"core"}, ""},
		{"graph,core", []string{"core", "graph"}, ""},
		{"archive", []string{"core", "archive"}, ""},
		{"core, ,graph", []string{"core", "graph"}, ""},
		{"core,full", all, ""},
		{"full,core", all, ""},
		{"admin", []string{"core", "lifecycle", "governance"}, ""},
		{"admin,graph", []string{"core", "lifecycle", "graph", "governance"}, ""},
		{"meta", []string{"core", "meta"}, ""},
		{"echo", []string{"core", "echo"}, ""},
		{"echo,graph", []string{"core", "graph", "echo"}, ""},
		// A family only refused plugins declare resolves; loading it then fails alone.
		{"dup", []string{"core", "dup"}, ""},
		{"core,xyz", nil, `unknown profile or family "xyz"`},
		{"xyz", nil, "families are core, lifecycle, graph, governance, power, meta, archive, other, echo"},
		{"Core", nil, "lowercase"},
		{"core,Graph", nil, "lowercase"},
		{"core,a_b", nil, `unknown profile or family "a_b"`},
		{strings.Repeat("z", 3000), nil, "(3000 bytes)"},
	}
	for _, c := range cases {
		p, err := ParseProfile(c.in, set)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseProfile(%.20q) error = %v, want containing %q", c.in, err, c.err)
			}
			if err != nil && len(err.Error()) > 400 {
				t.Errorf("ParseProfile(%.20q): error is %d bytes", c.in, len(err.Error()))
			}
			continue
		}
		if err != nil || !slices.Equal(p.Families(), c.want) {
			t.Errorf("ParseProfile(%q) = %v, %v; want %v", c.in, p.Families(), err, c.want)
		}
	}
	// The request alone says which families to keep warm before Describe is known.
	r, err := ParseRequest("graph,echo")
	if err != nil || !r.Mentions("echo") || !r.Mentions("core") || r.Mentions("power") {
		t.Errorf("ParseRequest(graph,echo) = %+v, %v", r, err)
	}
}

func TestProfileLabel(t *testing.T) {
	withEcho, _ := NewSet([]Declaration{echoPlugin})
	for _, c := range []struct {
		set       *Set
		in, label string
	}{
		{Contract(), "graph,core", "graph"},
		{Contract(), "lifecycle,governance", "admin"},
		{Contract(), "core,archive", "core,archive"},
		{Contract(), "", "core"},
		{Contract(), strings.Join(FirstParty(), ","), "full"},
		{withEcho, strings.Join(FirstParty(), ","), strings.Join(FirstParty(), ",")},
		{withEcho, "full", "full"},
		{withEcho, "echo", "core,echo"},
	} {
		p, err := ParseProfile(c.in, c.set)
		if err != nil || p.Label() != c.label {
			t.Errorf("Label(%q) = %q, %v; want %q", c.in, p.Label(), err, c.label)
		}
	}
}

func TestExpandNames(t *testing.T) {
	set, _ := NewSet([]Declaration{echoPlugin})
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"graph"}, "[graph]"},
		{[]string{"admin"}, "[core lifecycle governance]"},
		{[]string{"echo", "core"}, "[echo core]"},
		{[]string{"full"}, fmt.Sprint(set.Families())},
	} {
		got, err := ExpandNames(c.in, set)
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("ExpandNames(%v) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := ExpandNames([]string{"grpah"}, set); err == nil || !strings.Contains(err.Error(), `"grpah"`) {
		t.Errorf("unknown name: %v", err)
	}
}
