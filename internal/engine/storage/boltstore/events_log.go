package boltstore

import (
	"context"
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The durable event log (storage.EventLog): bucket events_log, seq (8,
// big-endian) → Event. The commit that writes a request's records logs
// its events in the same transaction (logEvents), and queues their webhook
// deliveries there too, so an acknowledged write's event and deliveries
// survive any crash, and a rolled-back one leaves none: the bucket's
// sequence rolls back with it.

// eventRetention is storage.EventRetention (a test lowers it).
var eventRetention uint64 = storage.EventRetention

// loggedEvent is storage.LoggedEvent.
func loggedEvent(typ string) bool { return storage.LoggedEvent(typ) }

// logEvents numbers and logs the events of a batch inside its transaction,
// queues their webhook deliveries, then trims the log to
// storage.EventRetention.
func logEvents(tx *bolt.Tx, batch []*writeReq) error {
	b := tx.Bucket(bucketEventsLog)
	subs, err := subscriptionsIn(tx)
	if err != nil {
		return err
	}
	// A subscription a write imported joins after that write's own events.
	imported := map[string]bool{}
	for _, r := range batch {
		for _, id := range r.w.importedSubs {
			imported[id] = true
		}
	}
	subs = slices.DeleteFunc(subs, func(sub *storage.Subscription) bool { return imported[sub.ID] })
	var last uint64
	for _, r := range batch {
		for _, e := range r.w.events {
			if !loggedEvent(e.Type) {
				continue
			}
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			e.Seq = seq
			raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
			if err != nil {
				return err
			}
			if err := b.Put(seqKey(seq), raw); err != nil {
				return err
			}
			if err := queueDeliveries(tx, subs, e, r.w.now); err != nil {
				return err
			}
			last = seq
		}
		if len(r.w.importedSubs) > 0 {
			started, err := startImported(tx, r.w.importedSubs, b.Sequence())
			if err != nil {
				return err
			}
			subs = append(subs, started...)
		}
	}
	if last <= eventRetention {
		return nil
	}
	cut := last - eventRetention // keep seq > cut
	c := b.Cursor()
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= cut; k, _ = c.Next() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// EventsAfter returns up to limit logged events with seq > after, oldest first.
func (s *Store) EventsAfter(ctx context.Context, after uint64, limit int) ([]*aimemoryv1.Event, error) {
	var out []*aimemoryv1.Event
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEventsLog).Cursor()
		for k, v := c.Seek(seqKey(after + 1)); k != nil && len(out) < limit; k, v = c.Next() {
			e := &aimemoryv1.Event{}
			if err := proto.Unmarshal(v, e); err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// LastSeq is the seq of the newest logged event.
func (s *Store) LastSeq(ctx context.Context) (uint64, error) {
	var seq uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		seq = tx.Bucket(bucketEventsLog).Sequence()
		return nil
	})
	return seq, err
}

// eventMemoryID reads only an encoded Event's memory_id.
func eventMemoryID(raw []byte) ([]byte, error) {
	for b := raw; len(b) > 0; {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil, protowire.ParseError(k)
		}
		b = b[k:]
		if num == eventFieldMemoryID && typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return nil, protowire.ParseError(k)
			}
			return v, nil
		}
		if k = protowire.ConsumeFieldValue(num, typ, b); k < 0 {
			return nil, protowire.ParseError(k)
		}
		b = b[k:]
	}
	return nil, nil
}

// eventFieldMemoryID is Event.memory_id's field number.
var eventFieldMemoryID = (&aimemoryv1.Event{}).ProtoReflect().Descriptor().Fields().ByName("memory_id").Number()
