package server

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Webhooks is what the Subscriptions service needs beyond the backend:
// the guard that vets target URLs and the sealer of secrets.
type Webhooks struct {
	Guard  webhook.Guard
	Sealer *webhook.Sealer
	Now    func() int64 // unix nanoseconds; nil: the backend's write time is not needed
	// Grants learns each new subscription's grant; nil: none kept.
	Grants *webhook.Grants
}

// Subscription limits.
const (
	MaxSecretBytes          = 1024
	MaxSubscriptionsPerUser = 100
	maxDeadLettersShown     = 50
)

// Subscriptions serves webhook subscriptions. A subscription belongs to
// its creator: only it lists or removes it.
type Subscriptions struct {
	aimemoryv1.UnimplementedSubscriptionsServer
	st    storage.Backend
	hooks Webhooks
	errorMapper
}

func (s *Subscriptions) Subscribe(ctx context.Context, req *aimemoryv1.SubscribeRequest) (*aimemoryv1.SubscribeResponse, error) {
	sub, err := s.subscribe(ctx, req)
	if err != nil {
		return nil, s.status(err)
	}
	out, err := s.describe(ctx, sub)
	return &aimemoryv1.SubscribeResponse{Subscription: out}, s.status(err)
}

// subscribe records the subscription with its creator's grant (family and
// scope), which every match and delivery applies (authz); a namespace
// filter the creator may not read was refused before (Authorize).
func (s *Subscriptions) subscribe(ctx context.Context, req *aimemoryv1.SubscribeRequest) (*storage.Subscription, error) {
	creator, _ := caller.FromContext(ctx)
	owner := creator.Principal
	if owner == "" {
		return nil, &storage.DeniedError{Reason: "subscribing needs the caller's identity"}
	}
	u, err := s.hooks.Guard.CheckURL(req.GetUrl())
	if err != nil {
		return nil, err
	}
	events, err := eventTypes(req.GetEvents())
	if err != nil {
		return nil, err
	}
	if ns := req.GetNamespaceFilter(); ns != "" {
		if err := record.ValidateNamespace("namespace_filter", ns); err != nil {
			return nil, err
		}
	}
	if a := req.GetAgentFilter(); a != "" {
		if err := record.ValidateAgentID("agent_filter", a); err != nil {
			return nil, err
		}
	}
	if len(req.GetSecret()) > MaxSecretBytes {
		return nil, &record.FieldError{Field: "secret", Rule: "must be at most 1024 bytes"}
	}
	all, err := s.st.ListSubscriptions(ctx)
	if err != nil {
		return nil, err
	}
	mine := 0
	for _, o := range all {
		if o.CreatedBy == owner {
			mine++
		}
	}
	if mine >= MaxSubscriptionsPerUser {
		return nil, &record.FieldError{Field: "url", Rule: "at most 100 subscriptions per identity: unsubscribe one first"}
	}
	sub := &storage.Subscription{
		ID: uuid.NewString(), URL: u.String(), Events: events,
		NamespaceFilter: req.GetNamespaceFilter(), AgentFilter: req.GetAgentFilter(),
		IncludeContent: req.GetIncludeContent(), CreatedBy: owner, CreatedAt: s.now(),
		Family: creator.Family, Scope: creator.Scope,
	}
	if secret := req.GetSecret(); secret != "" {
		if s.hooks.Sealer == nil {
			return nil, &record.FieldError{Field: "secret", Rule: "this engine has no secret key to seal it with"}
		}
		if sub.SealedSecret, err = s.hooks.Sealer.Seal(sub.ID, []byte(secret)); err != nil {
			return nil, err
		}
	}
	if err := s.st.PutSubscription(ctx, sub); err != nil {
		return nil, err
	}
	if s.hooks.Grants != nil {
		s.hooks.Grants.Subscribed(owner, creator.Scope)
	}
	return sub, nil
}

func (s *Subscriptions) now() int64 {
	if s.hooks.Now != nil {
		return s.hooks.Now()
	}
	return nowNanos()
}

// eventTypes validates the event list: known types or "*"; none means "*".
func eventTypes(in []string) ([]string, error) {
	if len(in) == 0 {
		return []string{"*"}, nil
	}
	var out []string
	for _, e := range in {
		if e != "*" && !slices.Contains(webhook.EventTypes, e) {
			return nil, &record.FieldError{Field: "events",
				Rule: "unknown event type " + record.Quote(e) + ": use * or " + strings.Join(webhook.EventTypes, ", ")}
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if slices.Contains(out, "*") {
		return []string{"*"}, nil
	}
	return out, nil
}

func (s *Subscriptions) Unsubscribe(ctx context.Context, req *aimemoryv1.UnsubscribeRequest) (*aimemoryv1.UnsubscribeResponse, error) {
	if err := record.ValidateID("id", req.GetId()); err != nil {
		return nil, s.status(err)
	}
	removed, err := s.st.DeleteSubscription(ctx, req.GetId(), storage.Principal(ctx))
	if err != nil {
		return nil, s.status(err)
	}
	return &aimemoryv1.UnsubscribeResponse{Removed: removed}, nil
}

// ListSubscriptions lists the caller's own subscriptions, newest first,
// with their delivery state.
func (s *Subscriptions) ListSubscriptions(ctx context.Context, _ *aimemoryv1.ListSubscriptionsRequest) (*aimemoryv1.ListSubscriptionsResponse, error) {
	owner := storage.Principal(ctx)
	all, err := s.st.ListSubscriptions(ctx)
	if err != nil {
		return nil, s.status(err)
	}
	resp := &aimemoryv1.ListSubscriptionsResponse{}
	for _, sub := range all {
		if owner == "" || sub.CreatedBy != owner {
			continue
		}
		out, err := s.describe(ctx, sub)
		if err != nil {
			return nil, s.status(err)
		}
		resp.Subscriptions = append(resp.Subscriptions, out)
	}
	return resp, nil
}

// describe is a subscription as the API shows it: never its secret.
func (s *Subscriptions) describe(ctx context.Context, sub *storage.Subscription) (*aimemoryv1.Subscription, error) {
	st, err := s.st.DeliveryState(ctx, sub.ID, maxDeadLettersShown)
	if err != nil {
		return nil, err
	}
	return &aimemoryv1.Subscription{
		Id: sub.ID, Url: sub.URL, Events: sub.Events, NamespaceFilter: sub.NamespaceFilter, AgentFilter: sub.AgentFilter,
		IncludeContent: sub.IncludeContent, Signed: len(sub.SealedSecret) > 0, CreatedBy: sub.CreatedBy, CreatedAt: sub.CreatedAt,
		DispatchCount: st.Dispatched, FailureCount: st.Failed, Pending: st.Pending, DeadLetters: st.Dead, DeadLetterCount: st.DeadCount,
	}, nil
}

func nowNanos() int64 { return time.Now().UnixNano() }
