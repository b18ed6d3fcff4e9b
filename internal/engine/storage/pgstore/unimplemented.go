package pgstore

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// The parts of storage.Backend this backend does not have yet. Each
// answers ErrNotImplemented, reading and writing nothing, and the engine
// refuses [storage] backend = "postgres" until none is left (settings).

// Graph.
func (s *Store) GetLinks(context.Context, *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	return nil, notImplemented("GetLinks")
}
func (s *Store) PutLink(context.Context, *aimemoryv1.PutLinkRequest) (*aimemoryv1.PutLinkResponse, error) {
	return nil, notImplemented("PutLink")
}
func (s *Store) InvalidateLink(context.Context, *aimemoryv1.InvalidateLinkRequest) (*aimemoryv1.InvalidateLinkResponse, error) {
	return nil, notImplemented("InvalidateLink")
}
func (s *Store) LinkTimeline(context.Context, *aimemoryv1.LinkTimelineRequest) (*aimemoryv1.LinkTimelineResponse, error) {
	return nil, notImplemented("LinkTimeline")
}
func (s *Store) RegisterEntity(context.Context, *aimemoryv1.RegisterEntityRequest) (*aimemoryv1.RegisterEntityResponse, error) {
	return nil, notImplemented("RegisterEntity")
}
func (s *Store) GetEntityByAlias(context.Context, *aimemoryv1.GetEntityByAliasRequest) (*aimemoryv1.GetEntityByAliasResponse, error) {
	return nil, notImplemented("GetEntityByAlias")
}

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
