package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestEveryToolHasOneFamily(t *testing.T) {
	total := 0
	seen := map[string]string{}
	for _, f := range Families {
		for _, tool := range ToolsOf(f) {
			if prev, dup := seen[tool]; dup {
				t.Fatalf("%s is in %s and %s", tool, prev, f)
			}
			seen[tool] = f
			if FamilyOf(tool) != f {
				t.Fatalf("FamilyOf(%s) = %q, want %q", tool, FamilyOf(tool), f)
			}
			total++
		}
	}
	if total != 43 {
		t.Fatalf("contract has %d tools, want 43", total)
	}
	if FamilyOf("memory_nope") != "" {
		t.Fatal("unknown tool mapped to a family")
	}
}

func TestParseProfile(t *testing.T) {
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
		{"core,graph", []string{"core", "graph"}, ""},
		{"archive", []string{"core", "archive"}, ""},
		{"core, ,graph", []string{"core", "graph"}, ""},
		{"core,full", Families, ""},
		{"full,core", Families, ""},
		{"admin", []string{"core", "lifecycle", "governance"}, ""},
		{"admin,graph", []string{"core", "lifecycle", "graph", "governance"}, ""},
		{"power", []string{"core", "power"}, ""},
		{"meta", []string{"core", "meta"}, ""},
		{"core,xyz", nil, `unknown profile or family "xyz"`},
		{"xyz", nil, "families are core, lifecycle"},
		{"Core", nil, "lowercase"},
		{"core,Graph", nil, "lowercase"},
	}
	for _, c := range cases {
		p, err := ParseProfile(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseProfile(%q) error = %v, want containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(p.Families(), c.want) {
			t.Errorf("ParseProfile(%q) = %v, %v; want %v", c.in, p.Families(), err, c.want)
		}
	}
}

func TestProfileLabel(t *testing.T) {
	for in, want := range map[string]string{"graph,core": "graph", "lifecycle,governance": "admin", "core,archive": "core,archive", "": "core"} {
		p, _ := ParseProfile(in)
		if p.Label() != want {
			t.Errorf("Label(%q) = %q, want %q", in, p.Label(), want)
		}
	}
}
