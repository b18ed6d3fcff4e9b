package pgstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The parts of storage.Backend this backend does not have yet. Each
// answers ErrNotImplemented, reading and writing nothing, and the engine
// refuses [storage] backend = "postgres" until none is left (settings).


// The durable event log, webhook subscriptions and deliveries, messages.
func (s *Store) EventsAfter(context.Context, uint64, int) ([]*aimemoryv1.Event, error) {
	return nil, notImplemented("EventsAfter")
}
func (s *Store) LastSeq(context.Context) (uint64, error) { return 0, notImplemented("LastSeq") }
func (s *Store) PutSubscription(context.Context, *storage.Subscription) error {
	return notImplemented("PutSubscription")
}
func (s *Store) DeleteSubscription(context.Context, string, string) (bool, error) {
	return false, notImplemented("DeleteSubscription")
}
func (s *Store) ListSubscriptions(context.Context) ([]*storage.Subscription, error) {
	return nil, notImplemented("ListSubscriptions")
}
func (s *Store) DeliveryState(context.Context, string, int) (uint64, []*storage.DeadLetter, uint64, error) {
	return 0, nil, 0, notImplemented("DeliveryState")
}
func (s *Store) DueDeliveries(context.Context, int64, int, func(string) bool, func(string, uint64) bool) ([]*storage.Delivery, int64, error) {
	return nil, 0, notImplemented("DueDeliveries")
}
func (s *Store) SettleDelivery(context.Context, int64, *storage.Delivery, storage.Outcome) error {
	return notImplemented("SettleDelivery")
}
func (s *Store) SendMessage(context.Context, *aimemoryv1.SendMessageRequest) (*aimemoryv1.SendMessageResponse, error) {
	return nil, notImplemented("SendMessage")
}
func (s *Store) ListInbox(context.Context, *aimemoryv1.ListInboxRequest) (*aimemoryv1.ListInboxResponse, error) {
	return nil, notImplemented("ListInbox")
}
