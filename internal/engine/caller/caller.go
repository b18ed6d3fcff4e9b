// Package caller carries the identity the host resolved for an engine call.
// The engine's transport verifies the host-signed assertion and puts the
// Caller into the request context; storage reads it from there. Nothing a
// tool argument says can change it.
package caller

import (
	"context"
	"slices"
	"strings"
)

// HostFamily is the family name of calls the host makes for itself
// (audit appends, the keeper's event stream, doctor).
const HostFamily = "host"

// AllNamespaces is the Scope that grants every namespace: held only by
// what the host grants it explicitly (stdio sessions, operator commands,
// a token or certificate issued for "*"). An empty Scope grants none.
const AllNamespaces = "*"

// Caller is who an engine call is made for.
type Caller struct {
	Principal string // the resolved identity, e.g. "ai:claude-code"
	Session   string // the host session the call belongs to
	Family    string // the family whose tool is running, or HostFamily
	// Scope is the namespace prefixes the principal may read and write,
	// separated by spaces (a namespace never holds one); AllNamespaces
	// grants every namespace and "" none (fail closed). An HTTP
	// principal's token or claims set it; the host grants stdio sessions
	// and its own commands AllNamespaces. internal/engine/authz applies it.
	Scope string
}

// InScope reports whether the caller's scope covers namespace ns: the
// grant of every namespace, or ns equals a prefix of it or lies below one
// ("team-a" covers "team-a" and "team-a/x", not "team-ab"; "=team-a"
// covers "team-a" alone). An empty scope covers nothing.
func (c Caller) InScope(ns string) bool {
	if c.Scope == AllNamespaces {
		return true
	}
	for p := range strings.SplitSeq(c.Scope, " ") {
		if covers(p, ns) {
			return true
		}
	}
	return false
}

// covers reports whether scope element p ("a", "a/" or "=a") covers
// namespace ns.
func covers(p, ns string) bool {
	if exact, ok := strings.CutPrefix(p, "="); ok {
		return exact != "" && ns == exact
	}
	return p != "" && p != AllNamespaces && (ns == p || (strings.HasPrefix(ns, p) && (strings.HasSuffix(p, "/") || ns[len(p)] == '/')))
}

// within reports whether scope element p covers all that element q does.
func within(q, p string) bool {
	if exact, ok := strings.CutPrefix(q, "="); ok {
		return covers(p, exact)
	}
	return !strings.HasPrefix(p, "=") && covers(p, strings.TrimSuffix(q, "/"))
}

// Intersect is the scope that covers what both scopes a and b cover
// (Scope syntax): how a grant recorded earlier is narrowed by a later one,
// and never widened. Disjoint scopes give "", which covers nothing.
func Intersect(a, b string) string {
	switch {
	case a == AllNamespaces:
		return b
	case b == AllNamespaces:
		return a
	}
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for p := range strings.FieldsSeq(a) {
		for q := range strings.FieldsSeq(b) {
			switch {
			case within(q, p):
				add(q)
			case within(p, q):
				add(p)
			}
		}
	}
	return strings.Join(out, " ")
}

// AllScope reports whether the caller holds the grant of every namespace.
func (c Caller) AllScope() bool { return c.Scope == AllNamespaces }

// IsHost reports whether the call comes from a host itself rather than a plugin.
func (c Caller) IsHost() bool { return c.Family == HostFamily }

type key struct{}

// NewContext returns ctx carrying c.
func NewContext(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// FromContext returns the caller of ctx; ok is false when none was verified
// (in-process tests that call storage directly).
func FromContext(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(key{}).(Caller)
	return c, ok
}
