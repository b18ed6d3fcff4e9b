package index

import (
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Filter is an aimemoryv1.Filter checked and prepared for matching.
type Filter struct {
	namespaces []string // allowed namespaces; nil = any
	tier       int8     // -1 = any
	agentID    string
	tag        string
	since      int64
	until      int64
	asAgent    []string             // ancestors of as_agent, self first; nil = no scope rule
	readable   func(ns string) bool // nil = every namespace
}

// Within hides every namespace for which readable is false: how a backend
// applies the read rule (authz) to a query.
func (f *Filter) Within(readable func(ns string) bool) { f.readable = readable }

// Hidden reports whether Within hides namespace ns.
func (f *Filter) Hidden(ns string) bool { return f.readable != nil && !f.readable(ns) }

// CompileFilter validates f (nil selects everything).
func CompileFilter(f *aimemoryv1.Filter) (*Filter, error) {
	c := &Filter{tier: -1}
	if f == nil {
		return c, nil
	}
	if ns := f.GetNamespace(); ns != "" {
		if err := record.ValidateNamespace("namespace", ns); err != nil {
			return nil, err
		}
		c.namespaces = []string{ns}
		if f.GetNamespaceAncestors() {
			c.namespaces = record.Ancestors(ns)
		}
	}
	if t := f.GetTier(); t != "" {
		if err := record.ValidateTier("tier", t); err != nil {
			return nil, err
		}
		c.tier = int8(record.TierRank(t))
	}
	if a := f.GetAgentId(); a != "" {
		if err := record.ValidateAgentID("agent_id", a); err != nil {
			return nil, err
		}
		c.agentID = a
	}
	if a := f.GetAsAgent(); a != "" {
		if err := record.ValidateNamespace("as_agent", a); err != nil {
			return nil, err
		}
		c.asAgent = record.Ancestors(a)
	}
	c.tag = f.GetTag()
	c.since = f.GetCreatedSince()
	c.until = f.GetCreatedUntil()
	return c, nil
}

func (f *Filter) match(x *Index, d *docInfo) bool {
	ns := x.ns(d)
	switch {
	case f.namespaces != nil && !slices.Contains(f.namespaces, ns),
		f.tier >= 0 && d.tier != f.tier,
		f.agentID != "" && x.strs.strs[d.agent] != f.agentID,
		f.tag != "" && !x.hasTag(d, f.tag),
		f.since != 0 && d.createdAt < f.since,
		f.until != 0 && d.createdAt > f.until,
		f.Hidden(ns):
		return false
	}
	return f.asAgent == nil || visible(d.scope, ns, f.asAgent)
}

// visible applies data-model §5.1: a memory of scope level L (private 0 …
// org 3) is visible to a caller whose namespace ancestors are a when its
// namespace is a[L] (private) or lies at or under a[L]; collective always.
func visible(scope int8, ns string, a []string) bool {
	switch {
	case scope < 0:
		return false
	case int(scope) == len(record.Scopes)-1:
		return true
	case int(scope) >= len(a):
		return false
	case scope == 0:
		return ns == a[0]
	}
	anc := a[scope]
	return ns == anc || strings.HasPrefix(ns, anc+"/")
}

func (x *Index) hasTag(d *docInfo, tag string) bool {
	for _, id := range x.tagIDs(d) {
		if x.strs.strs[id] == tag {
			return true
		}
	}
	return false
}
