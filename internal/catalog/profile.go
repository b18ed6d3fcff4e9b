package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
)

// ProfileNames are the named profiles, in documentation order.
var ProfileNames = []string{"core", "graph", "admin", "power", "full"}

// namedProfiles are the named profiles other than full (every family).
var namedProfiles = map[string][]string{
	"core":  {"core"},
	"graph": {"core", "graph"},
	"admin": {"core", "lifecycle", "governance"},
	"power": {"core", "power"},
}

// Request is a profile string read against the grammar (spec §1.3) but not
// yet against the installed families, which a host knows only once its
// plugins have described themselves.
type Request struct {
	full  bool
	names []string // family names, named profiles expanded, Base included
}

// ParseRequest reads a profile string: a named profile, or a comma list of
// profile and family names; Base is always added and full wins.
func ParseRequest(s string) (Request, error) {
	s = strings.TrimSpace(s)
	if strings.ToLower(s) != s {
		return Request{}, fmt.Errorf("profile %s: names are lowercase (for example %s)", sdk.Quote(s), sdk.Quote(strings.ToLower(s)))
	}
	r := Request{names: []string{Base}}
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		switch {
		case tok == "":
		case tok == "full":
			return Request{full: true}, nil
		case namedProfiles[tok] != nil:
			r.names = append(r.names, namedProfiles[tok]...)
		case ValidFamilyName(tok):
			r.names = append(r.names, tok)
		default:
			return Request{}, unknownName(tok, Contract())
		}
	}
	return r, nil
}

func unknownName(tok string, set *Set) error {
	return fmt.Errorf("unknown profile or family %s: profiles are %s; families are %s",
		sdk.Quote(tok), strings.Join(ProfileNames, ", "), strings.Join(set.Families(), ", "))
}

// String is the request as families ("full" for all), before resolution.
func (r Request) String() string {
	if r.full {
		return "full"
	}
	return strings.Join(r.names, ",")
}

// Mentions reports whether the request asks for family (full asks for all).
func (r Request) Mentions(family string) bool { return r.full || slices.Contains(r.names, family) }

// Resolve checks the request's names against a host's family set: a name no
// contract nor plugin knows is an error listing the valid ones.
func (r Request) Resolve(set *Set) (Profile, error) {
	if r.full {
		return Profile{families: set.Families(), label: "full"}, nil
	}
	for _, n := range r.names {
		if !set.known(n) {
			return Profile{}, unknownName(n, set)
		}
	}
	return newProfile(set, r.names), nil
}

// ParseProfile reads and resolves a profile string against set.
func ParseProfile(s string, set *Set) (Profile, error) {
	r, err := ParseRequest(s)
	if err != nil {
		return Profile{}, err
	}
	return r.Resolve(set)
}

// Profile is a set of families in the set's canonical order; Base is always in it.
type Profile struct {
	families []string
	label    string
}

// newProfile orders names as set does; names only a refused plugin declared
// come last, by name.
func newProfile(set *Set, names []string) Profile {
	var out []string
	for _, f := range set.Families() {
		if slices.Contains(names, f) {
			out = append(out, f)
		}
	}
	var rest []string
	for _, n := range names {
		if !set.Has(n) && !slices.Contains(rest, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	p := Profile{families: append(out, rest...)}
	p.label = strings.Join(p.families, ",")
	for _, n := range ProfileNames {
		named := set.Families()
		if n != "full" {
			named = namedProfiles[n]
		}
		if slices.Equal(p.families, named) {
			p.label = n
			break
		}
	}
	return p
}

// Families returns the profile's families in canonical order.
func (p Profile) Families() []string { return slices.Clone(p.families) }

// Has reports whether the profile loads a family.
func (p Profile) Has(family string) bool { return slices.Contains(p.families, family) }

// Label is the named profile equal to this family set, else the comma list.
func (p Profile) Label() string { return p.label }

// ExpandNames turns a list of profile and family names (as an allowlist row
// holds) into families without adding Base: a row that lists only graph
// allows only graph. Unknown names are an error listing the valid ones.
func ExpandNames(names []string, set *Set) ([]string, error) {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "full":
			out = append(out, set.Families()...)
		case set.known(n):
			out = append(out, n)
		case namedProfiles[n] != nil: // admin
			out = append(out, namedProfiles[n]...)
		default:
			return nil, unknownName(n, set)
		}
	}
	return out, nil
}

// ProfileTable is each named profile's families, full being every family of
// the given list (the families a client may see). Clients resolve profile
// names with it, so a third-party family counts in full as the host counts it.
func ProfileTable(families []string) map[string][]string {
	t := map[string][]string{"full": slices.Clone(families)}
	for n, fs := range namedProfiles {
		t[n] = slices.Clone(fs)
	}
	return t
}
