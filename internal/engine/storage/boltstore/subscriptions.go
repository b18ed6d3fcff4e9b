package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Webhook subscriptions and the dispatcher's durable state
// (storage.Subscriptions). These writes go through the group commit like
// any other, so they are fsynced before they return; none emits an event.

// PutSubscription stores a new subscription; it receives events logged
// after this transaction.
func (s *Store) PutSubscription(ctx context.Context, sub *storage.Subscription) error {
	return s.write(ctx, func(w *writeTx) error {
		c := *sub
		c.FromSeq = w.tx.Bucket(bucketEventsLog).Sequence()
		raw, err := json.Marshal(&c)
		if err != nil {
			return err
		}
		sub.FromSeq = c.FromSeq
		return w.tx.Bucket(bucketSubs).Put([]byte(c.ID), raw)
	})
}

// deleteSubscription deletes subscription id, its queue and its dead
// letters (DeleteRecords).
func deleteSubscription(tx *bolt.Tx, id string) error {
	if err := tx.Bucket(bucketSubs).Delete([]byte(id)); err != nil {
		return err
	}
	if err := deleteWhere(tx.Bucket(bucketWebhookQueue), func(k []byte) bool { return queueSub(k) == id }); err != nil {
		return err
	}
	prefix := append([]byte(id), 0)
	return deleteWhere(tx.Bucket(bucketWebhookDead), func(k []byte) bool { return bytes.HasPrefix(k, prefix) })
}

// deleteWhere deletes the keys of b that match.
func deleteWhere(b *bolt.Bucket, match func(k []byte) bool) error {
	var keys [][]byte
	if err := b.ForEach(func(k, _ []byte) error {
		if match(k) {
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func decodeSub(raw []byte) (*storage.Subscription, error) {
	if raw == nil {
		return nil, nil
	}
	sub := &storage.Subscription{}
	return sub, json.Unmarshal(raw, sub)
}

// ListSubscriptions lists every subscription, newest first.
func (s *Store) ListSubscriptions(ctx context.Context) ([]*storage.Subscription, error) {
	var out []*storage.Subscription
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSubs).ForEach(func(_, v []byte) error {
			sub, err := decodeSub(v)
			if err == nil {
				out = append(out, sub)
			}
			return err
		})
	})
	slices.SortFunc(out, func(a, b *storage.Subscription) int {
		if a.CreatedAt != b.CreatedAt {
			return int(b.CreatedAt - a.CreatedAt)
		}
		return bytes.Compare([]byte(a.ID), []byte(b.ID))
	})
	return out, err
}

// DeliveryState counts a subscription's pending deliveries and returns its
// newest dead letters.
func (s *Store) DeliveryState(ctx context.Context, id string, max int) (st storage.DeliveryState, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		if raw := tx.Bucket(bucketSubs).Get([]byte(id)); raw != nil {
			sub := &storage.Subscription{}
			if err := json.Unmarshal(raw, sub); err != nil {
				return err
			}
			st.Dispatched, st.Failed = sub.Dispatched, sub.Failed
		}
		prefix := append([]byte(id), 0)
		qc := tx.Bucket(bucketWebhookQueue).Cursor()
		for k, _ := qc.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = qc.Next() {
			st.Pending++
		}
		c := tx.Bucket(bucketWebhookDead).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			st.DeadCount++
		}
		// Newest (highest seq) first: walk back from the end of the prefix.
		end := append(bytes.Clone(prefix[:len(prefix)-1]), 1)
		k, v := c.Seek(end)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(st.Dead) < max; k, v = c.Prev() {
			d := &aimemoryv1.DeadLetter{}
			if err := proto.Unmarshal(v, d); err != nil {
				return err
			}
			st.Dead = append(st.Dead, d)
		}
		return nil
	})
	return st, err
}

// queueKey orders the queue by subscription, then by when each delivery
// is next due: a subscription whose receiver is slow costs the others
// nothing to skip.
func queueKey(d *storage.Delivery) []byte {
	k := append([]byte(d.SubscriptionID), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(d.NextAt))
	return binary.BigEndian.AppendUint64(k, d.Event.GetSeq())
}

func queueSub(k []byte) string {
	if len(k) < 17 {
		return ""
	}
	return string(k[:len(k)-17])
}

func putQueued(b *bolt.Bucket, d *storage.Delivery) error {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(d.Event)
	if err != nil {
		return err
	}
	c := *d
	c.EventRaw = raw
	v, err := json.Marshal(&c)
	if err != nil {
		return err
	}
	return b.Put(queueKey(d), v)
}

// queueDeliveries queues, inside the transaction that logs e, a delivery
// of e for every subscription it matches; subs is read once per commit.
func queueDeliveries(tx *bolt.Tx, subs []*storage.Subscription, e *aimemoryv1.Event, now int64) error {
	q := tx.Bucket(bucketWebhookQueue)
	for _, sub := range subs {
		if sub.Matches(e) {
			if err := putQueued(q, &storage.Delivery{SubscriptionID: sub.ID, Event: e, NextAt: now}); err != nil {
				return err
			}
		}
	}
	return nil
}

// subscriptionsIn reads every subscription in tx (none, cheaply, when there are none).
func subscriptionsIn(tx *bolt.Tx) ([]*storage.Subscription, error) {
	b := tx.Bucket(bucketSubs)
	if k, _ := b.Cursor().First(); k == nil {
		return nil, nil
	}
	var out []*storage.Subscription
	err := b.ForEach(func(_, v []byte) error {
		sub, err := decodeSub(v)
		if err == nil {
			out = append(out, sub)
		}
		return err
	})
	return out, err
}

// DueDeliveries returns up to limit deliveries due at now, decoding only
// those it returns.
func (s *Store) DueDeliveries(ctx context.Context, now int64, limit int, full func(string) bool, busy func(string, uint64) bool) ([]*storage.Delivery, int64, error) {
	var out []*storage.Delivery
	var next int64
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketWebhookQueue).Cursor()
		subs := tx.Bucket(bucketSubs).Cursor()
		for id, _ := subs.First(); id != nil && len(out) < limit; id, _ = subs.Next() {
			sub := string(id)
			if full != nil && full(sub) {
				continue
			}
			prefix := append(bytes.Clone(id), 0)
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Next() {
				at := int64(binary.BigEndian.Uint64(k[len(prefix):]))
				if at > now {
					if next == 0 || at < next {
						next = at
					}
					break
				}
				if busy != nil && busy(sub, binary.BigEndian.Uint64(k[len(prefix)+8:])) {
					continue
				}
				d := &storage.Delivery{SubscriptionID: sub}
				if err := json.Unmarshal(v, d); err != nil {
					return err
				}
				d.Event = &aimemoryv1.Event{}
				if err := proto.Unmarshal(d.EventRaw, d.Event); err != nil {
					return err
				}
				d.EventRaw = nil
				out = append(out, d)
			}
		}
		return nil
	})
	return out, next, err
}

// SettleDelivery records an attempt's outcome: d is the delivery's new
// state, queuedAt the NextAt it was queued under. A delivery whose
// subscription is gone is dropped.
func (s *Store) SettleDelivery(ctx context.Context, queuedAt int64, d *storage.Delivery, o storage.Outcome) error {
	return s.write(ctx, func(w *writeTx) error {
		q := w.tx.Bucket(bucketWebhookQueue)
		old := *d
		old.NextAt = queuedAt
		if err := q.Delete(queueKey(&old)); err != nil {
			return err
		}
		subs := w.tx.Bucket(bucketSubs)
		sub, err := decodeSub(subs.Get([]byte(d.SubscriptionID)))
		if err != nil || sub == nil {
			return err
		}
		switch o {
		case storage.Delivered:
			sub.Dispatched++
		case storage.Dropped:
		case storage.Retry:
			sub.Failed++
			if err := putQueued(q, d); err != nil {
				return err
			}
		case storage.Dead:
			sub.Failed++
			dl := &aimemoryv1.DeadLetter{Seq: d.Event.GetSeq(), Event: d.Event.GetType(), MemoryId: d.Event.GetMemoryId(),
				Attempts: d.Attempts, LastError: d.LastError, At: w.now}
			raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(dl)
			if err != nil {
				return err
			}
			key := binary.BigEndian.AppendUint64(append([]byte(d.SubscriptionID), 0), d.Event.GetSeq())
			dead := w.tx.Bucket(bucketWebhookDead)
			if err := dead.Put(key, raw); err != nil {
				return err
			}
			if err := trimDead(dead, d.SubscriptionID); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(sub)
		if err != nil {
			return err
		}
		return subs.Put([]byte(sub.ID), raw)
	})
}

// MaxDeadLetters is how many dead letters a subscription keeps (the oldest go first).
const MaxDeadLetters = 1000

func trimDead(b *bolt.Bucket, id string) error {
	prefix := append([]byte(id), 0)
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n > MaxDeadLetters; k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
		n--
	}
	return nil
}
