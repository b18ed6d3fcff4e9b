package records

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/seam"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Webhook subscriptions' owner rules (storage.Subscriptions); the start
// point, the delivery queue and its claims are the backend's (seam.Native).

// DeleteSubscription removes subscription id if owner made it; another
// identity's is as if there were none. Its queue and dead letters go with
// it (DeleteRecords).
func (s *Store) DeleteSubscription(ctx context.Context, id, owner string) (bool, error) {
	return written(ctx, s, func(t seam.Tx) (bool, error) {
		k := ops.Key{Kind: ops.KindSubscription, ID: id}
		r, err := t.Record(k)
		if err != nil || r == nil || r.GetSubscription().GetCreatedBy() != owner {
			return false, err
		}
		return true, t.DeleteRecords(k)
	})
}

// NarrowGrants narrows principal's subscriptions' grants to what presented
// covers (Subscription.Narrow); each is rewritten keeping its start point
// and delivery history (PutRecord over an existing one).
func (s *Store) NarrowGrants(ctx context.Context, principal, presented string) (int, error) {
	return written(ctx, s, func(t seam.Tx) (int, error) {
		var changed []*storage.Subscription
		if err := t.EachRecord(ops.KindSubscription, "", 0, func(_ string, r *aimemoryv1.ExportRecord) error {
			if sub := ops.SubscriptionOf(r.GetSubscription()); sub.CreatedBy == principal && sub.Narrow(presented) {
				changed = append(changed, sub)
			}
			return nil
		}); err != nil {
			return 0, err
		}
		for _, sub := range changed {
			if err := t.PutRecord(ops.ExportedSubscription(sub)); err != nil {
				return 0, err
			}
		}
		return len(changed), nil
	})
}
