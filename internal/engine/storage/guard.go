package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
)

// Namespaces beginning with "_" belong to the engine's own families (the
// agent registry, the inboxes): the ordinary write RPCs never write there,
// and an inbox is readable by its owner only. The owning family's
// operations (later RPCs such as RegisterAgent and SendMessage) write
// through the backend like any other, with a context from AsOwner.

// ReservedPrefix starts every guarded namespace.
const ReservedPrefix = "_"

// Guarded is one entry of the table of guarded namespaces.
type Guarded struct {
	Name   string // "_agents", or "_messages/" (a prefix: one inbox per principal)
	Prefix bool   // Name is a prefix rather than the whole namespace
	Owner  string // whose operations write there, for the error
}

// The guarded namespaces with owners. Any other "_" namespace is reserved
// and has none: nothing writes there yet.
var (
	GuardAgents   = Guarded{Name: "_agents", Owner: "the agent registry"}
	GuardMessages = Guarded{Name: InboxPrefix, Prefix: true, Owner: "messaging"}
	GuardFamilies = Guarded{Name: FamilyPrefix, Prefix: true, Owner: "the family it is named after"}
)

// FamilyPrefix starts a family's own keyspace: FamilyPrefix + family name
// (and namespaces below it). Only calls made for that family's tools (the
// family in the host-signed assertion) read or write there, through the
// ordinary memory RPCs: a plugin's storage view, as Vault gives each plugin.
const FamilyPrefix = "_family/"

// FamilyOf is the family whose keyspace ns lies in; "" outside any.
func FamilyOf(ns string) string {
	rest, ok := strings.CutPrefix(ns, FamilyPrefix)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// ownFamily reports whether ns is in the keyspace of the family calling.
func ownFamily(ctx context.Context, ns string) bool {
	c, ok := caller.FromContext(ctx)
	f := FamilyOf(ns)
	return ok && f != "" && c.Family == f
}

// InboxPrefix is the namespace prefix of inboxes: InboxPrefix + principal.
const InboxPrefix = "_messages/"

// guardOf is the entry guarding ns; ok is false for an ordinary namespace.
func guardOf(ns string) (g Guarded, ok bool) {
	switch {
	case !strings.HasPrefix(ns, ReservedPrefix):
		return Guarded{}, false
	case ns == GuardAgents.Name:
		return GuardAgents, true
	case strings.HasPrefix(ns, GuardMessages.Name):
		return GuardMessages, true
	case strings.HasPrefix(ns, GuardFamilies.Name):
		return GuardFamilies, true
	}
	return Guarded{Name: ns}, true
}

// IsGuarded reports whether ns is a guarded namespace.
func IsGuarded(ns string) bool {
	_, ok := guardOf(ns)
	return ok
}

type ownerKey struct{}

// AsOwner returns ctx allowing writes into the namespaces g guards: the
// internal write path of g's owning operations. It is set only by engine
// code serving those operations; no request field can set it, and the
// ordinary RPCs never do.
func AsOwner(ctx context.Context, g Guarded) context.Context {
	return context.WithValue(ctx, ownerKey{}, g)
}

// CheckGuard refuses op when it touches a guarded namespace and ctx is not
// that namespace's owner's (AsOwner). The error is ErrDenied
// (PermissionDenied) and names the rule.
func CheckGuard(ctx context.Context, op Op, namespaces ...string) error {
	for _, ns := range namespaces {
		g, guarded := guardOf(ns)
		if !guarded {
			continue
		}
		if owner, ok := ctx.Value(ownerKey{}).(Guarded); ok && g.Owner != "" && owner == g {
			continue
		}
		if g == GuardFamilies && ownFamily(ctx, ns) {
			continue
		}
		return &GuardedError{Namespace: ns, Op: op, Guard: g}
	}
	return nil
}

// GuardedError: an ordinary write touched a guarded namespace.
type GuardedError struct {
	Namespace string
	Op        Op
	Guard     Guarded
}

func (e *GuardedError) Error() string {
	who := "no operation writes there yet"
	if e.Guard.Owner != "" {
		who = "only " + e.Guard.Owner + " writes there"
	}
	return fmt.Sprintf("namespace: %s is guarded (namespaces beginning with '_' are reserved): %s; %s refused",
		quote(e.Namespace), who, e.Op)
}

func (e *GuardedError) Is(target error) bool { return target == ErrDenied }

// Readable reports whether the caller of ctx may read memories of ns: an
// inbox only by its owner (no caller, no inbox), a family's keyspace only
// by that family's calls, nothing outside the
// caller's scope, everything else by all.
func Readable(ctx context.Context, ns string) bool {
	if c, ok := caller.FromContext(ctx); ok && !c.InScope(ns) {
		return false // outside the principal's namespaces
	}
	if strings.HasPrefix(ns, FamilyPrefix) {
		return ownFamily(ctx, ns) // another family's keyspace is invisible
	}
	if !strings.HasPrefix(ns, InboxPrefix) {
		return true
	}
	own := OwnInbox(ctx)
	return own != "" && ns == own
}

// OwnInbox is the inbox namespace of the caller of ctx; "" without a caller.
func OwnInbox(ctx context.Context) string {
	c, ok := caller.FromContext(ctx)
	if !ok || c.Principal == "" {
		return ""
	}
	return InboxPrefix + c.Principal
}

// quote shows at most 64 bytes of a value, then its size.
func quote(s string) string {
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

// CheckScope refuses op when it touches a namespace outside the caller's
// scope (Caller.Scope: the namespaces an HTTP principal's credential grants).
func CheckScope(ctx context.Context, op Op, namespaces ...string) error {
	c, ok := caller.FromContext(ctx)
	if !ok || c.Scope == "" {
		return nil
	}
	for _, ns := range namespaces {
		if ns != "" && !c.InScope(ns) {
			return &DeniedError{Reason: fmt.Sprintf("namespace: %s is outside the namespaces %s may use (%s); %s refused",
				quote(ns), c.Principal, strings.ReplaceAll(c.Scope, " ", ", "), op)}
		}
	}
	return nil
}
