package webhook

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// Grants narrows the grant recorded with each subscription (its creator's
// scope, Subscription.Scope) to the one the creator holds now. The engine
// cannot ask a credential store (a principal may be a token's, a JWT's or
// a certificate's), but every call a principal makes carries the grant its
// credential has today, signed by the host: so each verified call of a
// subscription's creator with a narrower scope narrows it, and a narrowed
// key narrows its webhooks at its first use. It never widens one (a key
// given more namespaces subscribes again), so a session of the same name
// with a wider grant, such as the operator's own, changes nothing. The
// matching of events and every delivery read the recorded grant. A
// revoked key makes no call: `ai-memory token revoke` removes the
// subscriptions of a principal left with no key.
type Grants struct {
	st  grantStore
	log *slog.Logger

	mu     sync.Mutex
	scopes map[string][]string // creator principal → the scopes its subscriptions record
}

type grantStore interface {
	ListSubscriptions(ctx context.Context) ([]*storage.Subscription, error)
	NarrowGrants(ctx context.Context, principal, presented string) (int, error)
}

// NewGrants is a tracker over st (nil log: discard).
func NewGrants(st grantStore, log *slog.Logger) *Grants {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Grants{st: st, log: log, scopes: map[string][]string{}}
}

// Load reads who has subscriptions, with the grants recorded: at start and
// then every so often, for subscriptions other engines of a shared
// database made.
func (g *Grants) Load(ctx context.Context) error {
	subs, err := g.st.ListSubscriptions(ctx)
	if err != nil {
		return err
	}
	scopes := map[string][]string{}
	for _, s := range subs {
		if !slices.Contains(scopes[s.CreatedBy], s.Scope) {
			scopes[s.CreatedBy] = append(scopes[s.CreatedBy], s.Scope)
		}
	}
	g.mu.Lock()
	g.scopes = scopes
	g.mu.Unlock()
	return nil
}

// Subscribed notes a subscription just made by principal with scope.
func (g *Grants) Subscribed(principal, scope string) {
	g.mu.Lock()
	if !slices.Contains(g.scopes[principal], scope) {
		g.scopes[principal] = append(g.scopes[principal], scope)
	}
	g.mu.Unlock()
}

// Note narrows the grants of c's principal's subscriptions to c's scope
// where it is narrower: a map lookup for every call, a write only when a
// creator's grant narrowed.
func (g *Grants) Note(ctx context.Context, c caller.Caller) {
	g.mu.Lock()
	var next []string
	changed := false
	for _, r := range g.scopes[c.Principal] {
		n := caller.Intersect(r, c.Scope)
		changed = changed || n != r
		if !slices.Contains(next, n) {
			next = append(next, n)
		}
	}
	g.mu.Unlock()
	if !changed {
		return
	}
	n, err := g.st.NarrowGrants(context.WithoutCancel(ctx), c.Principal, c.Scope)
	if err != nil {
		g.log.Warn("webhook grants: narrow a subscriber's grant", "principal", c.Principal, "err", err)
		return
	}
	g.mu.Lock()
	g.scopes[c.Principal] = next
	g.mu.Unlock()
	g.log.Info("webhook grants: a subscriber's grant narrowed", "principal", c.Principal, "scope", c.Scope, "subscriptions", n)
}
