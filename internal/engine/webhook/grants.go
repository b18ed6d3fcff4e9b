package webhook

import (
	"context"
	"log/slog"
	"sync"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// Grants keeps the grant recorded with each subscription (its creator's
// scope, Subscription.Scope) the one the creator holds now. The engine
// cannot ask a credential store (a principal may be a token's, a JWT's or
// a certificate's), but every call a principal makes carries the grant its
// credential has today, signed by the host: so each verified call of a
// subscription's creator that carries another scope records it, and a
// narrowed key narrows its webhooks at its first use. The matching of
// events and every delivery read the recorded grant, so nothing outside
// it is delivered from then on. A revoked key makes no call:
// `ai-memory token revoke` removes the subscriptions of a principal left
// with no key.
type Grants struct {
	st  grantStore
	log *slog.Logger

	mu     sync.Mutex
	scopes map[string]string // creator principal → the scope its subscriptions record
}

type grantStore interface {
	ListSubscriptions(ctx context.Context) ([]*storage.Subscription, error)
	SetGrant(ctx context.Context, principal, scope string) (int, error)
}

// NewGrants is a tracker over st (nil log: discard).
func NewGrants(st grantStore, log *slog.Logger) *Grants {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Grants{st: st, log: log, scopes: map[string]string{}}
}

// Load reads who has subscriptions, with the grant recorded: at start and
// then every so often, for subscriptions other engines of a shared
// database made.
func (g *Grants) Load(ctx context.Context) error {
	subs, err := g.st.ListSubscriptions(ctx)
	if err != nil {
		return err
	}
	scopes := make(map[string]string, len(subs))
	for _, s := range subs {
		scopes[s.CreatedBy] = s.Scope
	}
	g.mu.Lock()
	g.scopes = scopes
	g.mu.Unlock()
	return nil
}

// Subscribed notes a subscription just made by principal with scope.
func (g *Grants) Subscribed(principal, scope string) {
	g.mu.Lock()
	g.scopes[principal] = scope
	g.mu.Unlock()
}

// Note records c's scope for the subscriptions c's principal made, when
// it differs from the one they record: a map lookup for every call, a
// write only when a creator's grant changed.
func (g *Grants) Note(ctx context.Context, c caller.Caller) {
	g.mu.Lock()
	recorded, ok := g.scopes[c.Principal]
	g.mu.Unlock()
	if !ok || recorded == c.Scope {
		return
	}
	n, err := g.st.SetGrant(context.WithoutCancel(ctx), c.Principal, c.Scope)
	if err != nil {
		g.log.Warn("webhook grants: record a changed grant", "principal", c.Principal, "err", err)
		return
	}
	g.mu.Lock()
	g.scopes[c.Principal] = c.Scope
	g.mu.Unlock()
	g.log.Info("webhook grants: a subscriber's grant changed", "principal", c.Principal, "scope", c.Scope, "subscriptions", n)
}
