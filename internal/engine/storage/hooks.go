package storage

import (
	"context"
	"slices"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// EventLog is the durable event stream: every committed event except
// memory_touch, written in its write's transaction and numbered in commit
// order (Event.seq, from 1). The newest EventRetention events are kept.
type EventLog interface {
	// EventsAfter returns up to limit logged events with seq > after, oldest first.
	EventsAfter(ctx context.Context, after uint64, limit int) ([]*aimemoryv1.Event, error)
	// LastSeq is the seq of the newest logged event (0 if none yet).
	LastSeq(ctx context.Context) (uint64, error)
}

// LoggedEvent says whether an event type goes into the log. A touch is a
// read's bookkeeping, not a change anyone subscribes to.
func LoggedEvent(typ string) bool { return typ != EventTouch }

// EventRetention is how many events the log keeps: older ones are trimmed
// in the transaction that logs newer ones. A consumer further behind than
// this loses the events in between (webhook deliveries are queued apart,
// so they do not depend on it).
const EventRetention = 100_000

// Subscription is a webhook subscription as stored. SealedSecret is the
// secret encrypted by the engine (package webhook); the backend never sees
// it in the clear.
type Subscription struct {
	ID              string   `json:"id"`
	URL             string   `json:"url"`
	Events          []string `json:"events"`
	NamespaceFilter string   `json:"namespace_filter,omitempty"`
	AgentFilter     string   `json:"agent_filter,omitempty"`
	IncludeContent  bool     `json:"include_content,omitempty"`
	SealedSecret    []byte   `json:"sealed_secret,omitempty"`
	CreatedBy       string   `json:"created_by"`
	CreatedAt       int64    `json:"created_at"`
	// The creator's grant: the family whose tool subscribed and the scope
	// its principal held, recorded at creation and narrowed (never
	// widened) by its later calls with a narrower one (NarrowGrants).
	// Matching and delivery read with it; "" grants nothing (a subscription
	// made before grants were recorded delivers nothing: make it again).
	Family string `json:"family,omitempty"`
	Scope  string `json:"scope,omitempty"`
	// FromSeq: the log's last seq when it was created; it receives only later events.
	FromSeq    uint64 `json:"from_seq"`
	Dispatched uint64 `json:"dispatched,omitempty"`
	Failed     uint64 `json:"failed,omitempty"`
}

// Delivery is one event due to one subscription, queued until it is
// delivered or dead-lettered.
type Delivery struct {
	SubscriptionID string            `json:"-"`
	Event          *aimemoryv1.Event `json:"-"`
	EventRaw       []byte            `json:"event"`
	Attempts       uint32            `json:"attempts,omitempty"`
	NextAt         int64             `json:"next_at"` // unix nanoseconds
	LastError      string            `json:"last_error,omitempty"`
}

// DeadLetter is a delivery given up after its last attempt.
type DeadLetter = aimemoryv1.DeadLetter

// Outcome is what became of one delivery attempt.
type Outcome int

const (
	Delivered Outcome = iota // remove it, count a dispatch
	Retry                    // keep it with the new Attempts, NextAt, LastError; count a failure
	Dead                     // move it to the dead letters; count a failure
	// Dropped: remove it, counting nothing (its subscription's creator may
	// no longer read the event, so not even a count of it is theirs).
	Dropped
)

// DeliveryState is what a subscription's description shows of its
// deliveries. It is read in one transaction, so that a dead letter and
// the failure that made it are seen together.
type DeliveryState struct {
	Pending    uint64        // deliveries queued or retrying
	Dead       []*DeadLetter // the newest dead letters
	DeadCount  uint64        // every dead letter kept
	Dispatched uint64        // the subscription's counters
	Failed     uint64
}

// Subscriptions is the subscriptions' storage and the webhook dispatcher's
// durable state: the delivery queue and the dead letters. A backend queues
// a delivery for every subscription an event matches (Subscription.Matches)
// in the transaction that logs the event, so a committed write's
// deliveries are as durable as the write, at no extra commit.
type Subscriptions interface {
	// PutSubscription stores a new subscription, setting its FromSeq in the
	// same transaction.
	PutSubscription(ctx context.Context, s *Subscription) error
	// DeleteSubscription removes one subscription with its queue and dead
	// letters if owner created it; false when there is no such id, and
	// exactly the same when another identity created it.
	DeleteSubscription(ctx context.Context, id, owner string) (bool, error)
	// NarrowGrants narrows the grant (Subscription.Scope) of every
	// subscription principal created to what presented also covers
	// (caller.Intersect); it returns how many changed.
	NarrowGrants(ctx context.Context, principal, presented string) (int, error)
	// ListSubscriptions lists all subscriptions, newest first.
	ListSubscriptions(ctx context.Context) ([]*Subscription, error)
	// DeliveryState is one subscription's delivery state, read at one
	// moment: dead letters newest first, at most max.
	DeliveryState(ctx context.Context, id string, max int) (DeliveryState, error)

	// DueDeliveries returns up to limit deliveries due at now (NextAt ≤
	// now), each subscription's earliest first, passing over the
	// subscriptions full names and the deliveries busy names by key alone
	// (nothing is decoded for them), and the earliest NextAt not due yet
	// among the subscriptions it looked at (0: none).
	DueDeliveries(ctx context.Context, now int64, limit int, full func(subscriptionID string) bool,
		busy func(subscriptionID string, seq uint64) bool) (due []*Delivery, next int64, err error)
	// SettleDelivery records an attempt's outcome: d is the delivery's new
	// state (Attempts, NextAt, LastError), queuedAt the NextAt it was queued under.
	SettleDelivery(ctx context.Context, queuedAt int64, d *Delivery, o Outcome) error
}

// Messages are the inboxes (namespaces InboxPrefix + principal).
type Messages interface {
	SendMessage(ctx context.Context, req *aimemoryv1.SendMessageRequest) (*aimemoryv1.SendMessageResponse, error)
	ListInbox(ctx context.Context, req *aimemoryv1.ListInboxRequest) (*aimemoryv1.ListInboxResponse, error)
}

// Creator is the subscription's creator with its recorded grant: whom the
// dispatcher reads a delivered memory as.
func (s *Subscription) Creator() caller.Caller {
	return caller.Caller{Principal: s.CreatedBy, Family: s.Family, Scope: s.Scope}
}

// Narrow narrows s's grant to what presented also covers; it reports
// whether that changed it.
func (s *Subscription) Narrow(presented string) bool {
	next := caller.Intersect(s.Scope, presented)
	changed := next != s.Scope
	s.Scope = next
	return changed
}

// Matches reports whether s receives e: logged after s was made, of a type
// it names (or "*"), in its namespace and agent filters (the agent filter
// matches the claimed agent id or the principal), and readable by its
// creator's grant (authz: its scope, another's inbox, another family's
// keyspace). The dispatcher asks again at delivery, with the grant then.
func (s *Subscription) Matches(e *aimemoryv1.Event) bool {
	switch {
	case e.GetSeq() <= s.FromSeq:
		return false
	case !slices.Contains(s.Events, "*") && !slices.Contains(s.Events, e.GetType()):
		return false
	case s.NamespaceFilter != "" && s.NamespaceFilter != e.GetNamespace():
		return false
	case s.AgentFilter != "" && s.AgentFilter != e.GetAgentId() && s.AgentFilter != e.GetPrincipal():
		return false
	}
	return authz.For(s.Creator()).Reads(e.GetNamespace())
}

// DeliveryWaker is implemented by a backend whose delivery queue other
// processes fill too (a database several engines share): the channel
// receives when deliveries may have been queued by any of them, until ctx
// ends. It is only a wake-up: one lost (a dropped connection) delays a
// delivery until the dispatcher's next look, never loses it.
type DeliveryWaker interface {
	DeliveryWake(ctx context.Context) <-chan struct{}
}

// ClaimTaker is implemented by a backend whose deliveries are claimed by
// the engine attempting them (a database several engines share). The
// engine that becomes the dispatch leader calls TakeOverClaims first: the
// engine that led before is gone (its session, and so its lock, ended), so
// its claims are released at once instead of when their lease runs out.
type ClaimTaker interface {
	TakeOverClaims(ctx context.Context) (released int64, err error)
}

// SealKeyBinder is implemented by a backend several engines share. The
// subscriptions' secrets are sealed with a data dir's webhook key, so
// every engine of the database must hold the same key: BindSealKey
// records fingerprint (of this engine's key) when the database has none,
// and fails with *SealKeyMismatchError when it holds another.
type SealKeyBinder interface {
	BindSealKey(ctx context.Context, fingerprint string) error
}

// SealKeyMismatchError: this engine's webhook key is not the one the
// shared database's subscriptions are sealed with.
type SealKeyMismatchError struct{ Database, Engine string }

func (e *SealKeyMismatchError) Error() string {
	return "webhook.key of this data dir (fingerprint " + e.Engine + ") is not the one this database's webhook secrets are sealed with (" +
		e.Database + "): copy webhook.key from the data dir of an engine already serving this database"
}
