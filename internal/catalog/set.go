package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
)

// Declaration is what one plugin binary says it serves (its Describe answer).
type Declaration struct {
	Plugin     string // binary name, for messages
	FirstParty bool   // listed in the build's manifest, not pinned in config
	Families   []DeclaredFamily
}

// DeclaredFamily is one family of a Declaration and its tools' names.
type DeclaredFamily struct {
	Name  string
	Tools []string
}

// Refusal is a plugin left out of the set, and why.
type Refusal struct {
	Plugin   string
	Families []string // what it declared, so a profile naming one still resolves
	Reason   string
}

func (r Refusal) Error() string { return "plugin " + r.Plugin + " refused: " + r.Reason }

// Set is the families one host knows: the contract's (installed or not) and
// every family an accepted plugin declares. Build it with NewSet.
type Set struct {
	families []string            // canonical order: contract, then the others by name
	tools    map[string][]string // family → its tools, as declared (contract names if not installed)
	owner    map[string]string   // tool → family
	plugin   map[string]string   // installed family → plugin serving it
	refused  map[string]string   // family of a refused plugin → why
}

// Contract is the set with no plugin installed.
func Contract() *Set {
	s, _ := NewSet(nil)
	return s
}

// NewSet checks every declaration and builds the set of the accepted ones.
// A plugin is refused, as a whole, when it declares a malformed name, a
// family or tool the contract reserves for another, or a family or tool
// another plugin declares too. First-party declarations win over
// third-party ones; a clash between peers refuses all of them. Nothing
// depends on the order of decls.
func NewSet(decls []Declaration) (*Set, []Refusal) {
	reasons := map[int][]string{}
	for i, d := range decls {
		reasons[i] = append(reasons[i], selfCheck(d)...)
	}
	// Claims on family and tool names by the plugins that passed their own checks.
	families, tools := map[string][]int{}, map[string][]int{}
	for i, d := range decls {
		if len(reasons[i]) > 0 {
			continue
		}
		for _, f := range d.Families {
			families[f.Name] = append(families[f.Name], i)
			for _, t := range f.Tools {
				tools[t] = append(tools[t], i)
			}
		}
	}
	// A first-party claim beats third-party ones; peers that clash are all refused.
	clash := func(kind string, claims map[string][]int) {
		for name, who := range claims {
			var first, third []string
			for _, i := range who {
				if decls[i].FirstParty {
					first = append(first, decls[i].Plugin)
				} else {
					third = append(third, decls[i].Plugin)
				}
			}
			for _, i := range who {
				peers, winners := third, []string(nil)
				if decls[i].FirstParty {
					peers = first
				} else {
					winners = first
				}
				others := slices.DeleteFunc(slices.Clone(peers), func(p string) bool { return p == decls[i].Plugin })
				switch {
				case len(winners) > 0:
					reasons[i] = append(reasons[i], fmt.Sprintf("it declares %s %q, which first-party plugin %s serves", kind, name, list(winners)))
				case len(others) > 0:
					reasons[i] = append(reasons[i], fmt.Sprintf("it declares %s %q, which plugin %s declares too; every plugin in such a clash is refused", kind, name, list(others)))
				}
			}
		}
	}
	clash("family", families)
	clash("tool", tools)

	s := &Set{tools: map[string][]string{}, owner: map[string]string{}, plugin: map[string]string{}, refused: map[string]string{}}
	var refusals []Refusal
	var extra []string
	for i, d := range decls {
		if r := reasons[i]; len(r) > 0 {
			sort.Strings(r)
			ref := Refusal{Plugin: d.Plugin, Reason: strings.Join(r, "; ")}
			for _, f := range d.Families {
				ref.Families = append(ref.Families, f.Name)
				if _, dup := s.refused[f.Name]; !dup {
					s.refused[f.Name] = ref.Error()
				}
			}
			refusals = append(refusals, ref)
			continue
		}
		for _, f := range d.Families {
			s.plugin[f.Name] = d.Plugin
			s.tools[f.Name] = slices.Clone(f.Tools)
			if contractTools(f.Name) == nil {
				extra = append(extra, f.Name)
			}
		}
	}
	sort.Strings(extra)
	s.families = append(FirstParty(), extra...)
	for _, f := range s.families {
		if _, installed := s.plugin[f]; !installed {
			s.tools[f] = slices.Clone(contractTools(f))
		}
		for _, t := range s.tools[f] {
			s.owner[t] = f
		}
		delete(s.refused, f) // a name someone else serves is not "refused"
	}
	for _, c := range contract {
		for _, t := range c.tools {
			s.owner[t] = c.family // reserved even when its plugin does not declare it
		}
	}
	sort.Slice(refusals, func(i, j int) bool { return refusals[i].Plugin < refusals[j].Plugin })
	return s, refusals
}

// selfCheck lists what is wrong with a declaration on its own.
func selfCheck(d Declaration) []string {
	var out []string
	seenFamily, seenTool := map[string]bool{}, map[string]bool{}
	for _, f := range d.Families {
		switch {
		case !ValidFamilyName(f.Name):
			out = append(out, fmt.Sprintf("family name %s does not match %s", sdk.Quote(f.Name), FamilyNameRule))
		case seenFamily[f.Name]:
			out = append(out, fmt.Sprintf("it declares family %q twice", f.Name))
		case !d.FirstParty && reserved(f.Name):
			out = append(out, fmt.Sprintf("it declares family %q, a first-party name (only a plugin listed in the build's manifest may serve it)", f.Name))
		case len(f.Tools) == 0:
			out = append(out, fmt.Sprintf("family %q declares no tools", f.Name))
		}
		seenFamily[f.Name] = true
		for _, t := range f.Tools {
			owner := contractFamilyOf(t)
			switch {
			case !toolName.MatchString(t):
				out = append(out, fmt.Sprintf("tool name %s does not match %s", sdk.Quote(t), ToolNameRule))
			case seenTool[t]:
				out = append(out, fmt.Sprintf("it declares tool %q twice", t))
			case IsAlwaysOn(t):
				out = append(out, fmt.Sprintf("it declares tool %q, which the host serves itself", t))
			case owner != "" && owner != f.Name:
				out = append(out, fmt.Sprintf("it declares tool %q in family %q, but %s belongs to the %s family", t, f.Name, t, owner))
			case owner != "" && !d.FirstParty:
				out = append(out, fmt.Sprintf("it declares tool %q, a first-party tool of the %s family", t, owner))
			}
			seenTool[t] = true
		}
	}
	return out
}

// Families lists the known families in canonical order: the contract's,
// then the others by name.
func (s *Set) Families() []string { return slices.Clone(s.families) }

// Has reports whether family is in the set.
func (s *Set) Has(family string) bool { return slices.Contains(s.families, family) }

// ToolsOf lists a family's tools: as its plugin declares them, else the contract's.
func (s *Set) ToolsOf(family string) []string { return slices.Clone(s.tools[family]) }

// FamilyOf returns the family owning a tool, or "".
func (s *Set) FamilyOf(tool string) string { return s.owner[tool] }

// Installed reports whether an accepted plugin serves family.
func (s *Set) Installed(family string) bool { _, ok := s.plugin[family]; return ok }

// Plugin names the binary serving family ("" if none).
func (s *Set) Plugin(family string) string { return s.plugin[family] }

// RefusedFamily says why family is unavailable when only a refused plugin
// declares it ("" otherwise).
func (s *Set) RefusedFamily(family string) string { return s.refused[family] }

// known reports whether a profile or allowlist may name family: it is in
// the set, or a refused plugin declares it (loading it then fails with the
// refusal, instead of the whole host failing to start).
func (s *Set) known(family string) bool { return s.Has(family) || s.refused[family] != "" }

func list(names []string) string {
	names = slices.Clone(names)
	sort.Strings(names)
	return strings.Join(names, ", ")
}
