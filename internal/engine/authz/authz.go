// Package authz decides who may read and write which namespace. It is the
// one rule: the engine's services check the namespaces a request names
// with it before any backend call, every backend filters what it reads
// and authorizes what it writes with it, and webhooks, the event stream
// and governance apply it to their own callers. It fails closed: a
// context with no verified caller reads and writes nothing, and an empty
// scope grants no namespace; every namespace is the explicit grant
// caller.AllNamespaces, which only the host hands out (stdio sessions,
// operator commands, a "*" credential), or the engine's own System work.
//
// A caller reads namespace ns when
//   - ns is its own inbox (InboxPrefix + its principal), whatever its scope;
//   - else ns is in its scope (caller.Caller.InScope), and when ns is a
//     family's keyspace (FamilyPrefix + family) the call is that family's;
//   - or the context is the owning operation of ns's guard (AsOwner).
//
// It writes ns when it reads it, except that the guarded namespaces
// ("_" and below) take no ordinary write at all: only their owners'
// operations (AsOwner) write there, and a family its own keyspace.
package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
)

// ErrDenied is what every refusal of a write matches (errors.Is); the
// engine maps it to PermissionDenied.
var ErrDenied = errors.New("write denied by policy")

// DeniedError is a refusal with its reason; errors.Is(err, ErrDenied) holds.
type DeniedError struct{ Reason string }

func (e *DeniedError) Error() string {
	if e.Reason == "" {
		return ErrDenied.Error()
	}
	return e.Reason
}

func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Grant is what the caller of one context may touch, resolved once.
type Grant struct {
	c      caller.Caller
	known  bool    // a verified caller (or a grant made by the engine) is present
	system bool    // the engine's own housekeeping: everything
	owner  Guarded // the guard whose owning operation runs (AsOwner); zero: none
}

type systemKey struct{}

// System returns ctx for the engine's own housekeeping (archive purge,
// embedding, the webhook dispatcher's reads of what it delivers are NOT
// this: they run with the subscriber's grant). It reads every namespace,
// inboxes and keyspaces included. Only engine code sets it; no request can.
func System(ctx context.Context) context.Context {
	return context.WithValue(ctx, systemKey{}, true)
}

// Of is the grant of ctx's caller.
func Of(ctx context.Context) Grant {
	g := Grant{}
	g.c, g.known = caller.FromContext(ctx)
	g.system, _ = ctx.Value(systemKey{}).(bool)
	g.owner, _ = ctx.Value(ownerKey{}).(Guarded)
	return g
}

// For is the grant of caller c (a webhook's creator, as it subscribed).
func For(c caller.Caller) Grant { return Grant{c: c, known: true} }

// Caller is the verified caller, if any.
func (g Grant) Caller() (caller.Caller, bool) { return g.c, g.known }

// Everything reports whether the grant covers every ordinary namespace
// (caller.AllNamespaces, or the engine's own work): such a caller may see
// store-wide figures (link and archive totals, the file's size).
func (g Grant) Everything() bool { return g.system || (g.known && g.c.AllScope()) }

// Reads reports whether the grant may read memories (and their events,
// links, archive rows, counts) of namespace ns.
func (g Grant) Reads(ns string) bool {
	switch {
	case g.system:
		return true
	case !g.known:
		return false
	case !strings.HasPrefix(ns, ReservedPrefix):
		return g.c.InScope(ns) // the common case first: an ordinary namespace
	case g.owner.covers(ns):
		return true
	case strings.HasPrefix(ns, InboxPrefix):
		return g.c.Principal != "" && ns == InboxPrefix+g.c.Principal
	case !g.c.InScope(ns):
		return false
	case strings.HasPrefix(ns, FamilyPrefix):
		f := FamilyOf(ns)
		return f != "" && g.c.Family == f
	}
	return true
}

// Reader is Reads as a predicate, for filters over many namespaces.
func (g Grant) Reader() func(ns string) bool { return g.Reads }

// CheckWrite refuses op (a verb for the message: "store", "link") when it
// touches a namespace the grant may not write: a guarded namespace
// outside its owner's operation (*GuardedError), or one outside the
// caller's scope (*DeniedError). Both match ErrDenied. An empty namespace
// is not checked (the request's default applies before it is written).
func (g Grant) CheckWrite(op string, namespaces ...string) error {
	for _, ns := range namespaces {
		if ns == "" || g.system {
			continue
		}
		if !g.known {
			return &DeniedError{Reason: fmt.Sprintf("namespace: %s: a write needs a verified caller; %s refused", Quote(ns), op)}
		}
		if gd, guarded := guardOf(ns); guarded {
			switch {
			case g.owner.Owner != "" && g.owner == gd:
				continue // the owner's operation: messaging writes any inbox, the registry _agents
			case gd == GuardFamilies && FamilyOf(ns) != "" && g.c.Family == FamilyOf(ns):
				// the family's own keyspace: its scope still applies below
			default:
				return &GuardedError{Namespace: ns, Op: op, Guard: gd}
			}
		}
		if !g.c.InScope(ns) {
			return &DeniedError{Reason: fmt.Sprintf("namespace: %s is outside the namespaces %s may use (%s); %s refused",
				Quote(ns), g.c.Principal, scopeList(g.c.Scope), op)}
		}
	}
	return nil
}

// scopeList shows a scope for an error: its prefixes, or "none".
func scopeList(scope string) string {
	if strings.TrimSpace(scope) == "" {
		return "none"
	}
	return strings.ReplaceAll(scope, " ", ", ")
}

// Quote shows at most 64 bytes of a value, then its size.
func Quote(s string) string {
	const max = 64
	if len(s) <= max {
		return fmt.Sprintf("'%s'", s)
	}
	cut := max
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return fmt.Sprintf("'%s…' (%d bytes)", s[:cut], len(s))
}
