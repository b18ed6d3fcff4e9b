package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// ProfileNames are the named profiles, in documentation order.
var ProfileNames = []string{"core", "graph", "admin", "power", "full"}

var namedProfiles = map[string][]string{
	"core":  {"core"},
	"graph": {"core", "graph"},
	"admin": {"core", "lifecycle", "governance"},
	"power": {"core", "power"},
	"full":  Families,
}

// Profile is a set of families in canonical order; core is always in it.
type Profile struct {
	families []string
}

// Families returns the profile's families in canonical order.
func (p Profile) Families() []string { return slices.Clone(p.families) }

// Has reports whether the profile loads a family.
func (p Profile) Has(family string) bool { return slices.Contains(p.families, family) }

// Label is the named profile equal to this family set, else the comma list.
func (p Profile) Label() string {
	for _, n := range ProfileNames {
		if slices.Equal(p.families, namedProfiles[n]) {
			return n
		}
	}
	return strings.Join(p.families, ",")
}

// Equal reports whether two profiles load the same families.
func (p Profile) Equal(q Profile) bool { return slices.Equal(p.families, q.families) }

// NewProfile builds a profile from family names (core is added).
func NewProfile(families ...string) Profile {
	set := map[string]bool{"core": true}
	for _, f := range families {
		set[f] = true
	}
	var out []string
	for _, f := range Families {
		if set[f] {
			out = append(out, f)
		}
	}
	return Profile{families: out}
}

// ParseProfile reads a profile string (spec §1.3): a named profile, or a
// comma list of profile and family names; core is always added, full wins.
func ParseProfile(s string) (Profile, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return NewProfile(), nil
	}
	if strings.ToLower(s) != s {
		return Profile{}, fmt.Errorf("profile %q: names are lowercase (for example %q)", s, strings.ToLower(s))
	}
	var families []string
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		switch {
		case tok == "":
		case tok == "full":
			return NewProfile(Families...), nil
		case namedProfiles[tok] != nil:
			families = append(families, namedProfiles[tok]...)
		case IsFamily(tok):
			families = append(families, tok)
		default:
			return Profile{}, fmt.Errorf("unknown profile or family %q: profiles are %s; families are %s",
				tok, strings.Join(ProfileNames, ", "), strings.Join(Families, ", "))
		}
	}
	return NewProfile(families...), nil
}

// ExpandNames turns a list of profile and family names (as an allowlist row
// holds) into families; unknown names are an error.
func ExpandNames(names []string) ([]string, error) {
	p, err := ParseProfile(strings.Join(names, ","))
	if err != nil {
		return nil, err
	}
	return p.families, nil
}
