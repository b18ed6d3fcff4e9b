package authz

import (
	"context"
	"fmt"
	"strings"
)

// Namespaces beginning with "_" belong to the engine's own operations (the
// agent registry, the inboxes) and to the families' keyspaces: the
// ordinary write RPCs never write there, and an inbox is readable by its
// owner only. The owning operations (RegisterAgent, SendMessage) write
// through the backend like any other, with a context from AsOwner.

// ReservedPrefix starts every guarded namespace.
const ReservedPrefix = "_"

// InboxPrefix is the namespace prefix of inboxes: InboxPrefix + principal.
const InboxPrefix = "_messages/"

// FamilyPrefix starts a family's own keyspace: FamilyPrefix + family name
// (and namespaces below it). Only calls made for that family's tools (the
// family in the host-signed assertion) read or write there, within their
// scope, through the ordinary memory RPCs: a plugin's storage view, as
// Vault gives each plugin.
const FamilyPrefix = "_family/"

// Guarded is one entry of the table of guarded namespaces.
type Guarded struct {
	Name   string // "_agents", or "_messages/" (a prefix: one inbox per principal)
	Prefix bool   // Name is a prefix rather than the whole namespace
	Owner  string // whose operations write there, for the error
	// OwnerReads: the owner's operations also read there whatever the
	// caller's scope (the registry merges an agent's entry; messaging,
	// which writes into others' inboxes, reads none of them).
	OwnerReads bool
}

// The guarded namespaces with owners. Any other "_" namespace is reserved
// and has none: nothing writes there yet.
var (
	GuardAgents   = Guarded{Name: "_agents", Owner: "the agent registry", OwnerReads: true}
	GuardMessages = Guarded{Name: InboxPrefix, Prefix: true, Owner: "messaging"}
	GuardFamilies = Guarded{Name: FamilyPrefix, Prefix: true, Owner: "the family it is named after"}
)

// FamilyOf is the family whose keyspace ns lies in; "" outside any.
func FamilyOf(ns string) string {
	rest, ok := strings.CutPrefix(ns, FamilyPrefix)
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

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

// covers reports whether the owning operation g reads ns.
func (g Guarded) covers(ns string) bool {
	if g.Owner == "" || !g.OwnerReads {
		return false
	}
	o, _ := guardOf(ns)
	return o == g
}

type ownerKey struct{}

// AsOwner returns ctx allowing writes into the namespaces g guards: the
// internal write path of g's owning operations. It is set only by engine
// code serving those operations; no request field can set it, and the
// ordinary RPCs never do.
func AsOwner(ctx context.Context, g Guarded) context.Context {
	return context.WithValue(ctx, ownerKey{}, g)
}

// GuardedError: an ordinary write touched a guarded namespace.
type GuardedError struct {
	Namespace string
	Op        string
	Guard     Guarded
}

func (e *GuardedError) Error() string {
	who := "no operation writes there yet"
	if e.Guard.Owner != "" {
		who = "only " + e.Guard.Owner + " writes there"
	}
	return fmt.Sprintf("namespace: %s is guarded (namespaces beginning with '_' are reserved): %s; %s refused",
		Quote(e.Namespace), who, e.Op)
}

func (e *GuardedError) Is(target error) bool { return target == ErrDenied }
