package pgstore

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The durable event log (storage.EventLog), table events: every logged
// event (storage.LoggedEvent) of a write is numbered and written in the
// write's transaction, with its webhook deliveries, so an acknowledged
// write's events and deliveries are as durable as it is, and a rolled-back
// one leaves none.
//
// Seqs are handed out in commit order. A sequence value taken in an open
// transaction can commit after a higher one, and a reader whose cursor
// passed the gap would lose that event for good; EventsAfter has no state
// to remember gaps in (catchup.go does, per engine). So a write takes its
// seqs holding the lock on event_lock's row, which it keeps until its
// commit: the next write's seqs are taken after that commit is visible,
// and a reader that sees seq n sees every committed seq below it. Seqs of
// a write that rolled back after taking them are gaps that never fill.
// The row is locked, never updated, by writes (so SERIALIZABLE never fails
// them on it); it is held from the end of a write's statements to its
// commit, one round trip, and only by writes that log an event.
//
// The delivery queue and the claims are subscriptions.go's; NOTIFY, only a
// wake-up, deliverywake.go's.

// eventRetention is storage.EventRetention (a test lowers it).
var eventRetention int64 = storage.EventRetention

// deliveryChannel is the NOTIFY channel a write that queued deliveries
// wakes dispatchers with (deliverywake.go).
const deliveryChannel = "ai_memory_deliveries"

// logStatement takes the lock and the seqs, logs the events, queues the
// deliveries (only if the subscriptions they were matched against, at
// version $6, are still those), trims the log and wakes dispatchers, in
// one round trip. The seqs are a range taken holding the lock (so no one
// else takes any meanwhile): last-n+1 … last, in the order of $2. The
// trim's condition on last alone is a one-time filter: below the
// retention the log is not read at all (a read of its low end would make
// every two concurrent SERIALIZABLE writes conflict on a small log).
const logStatement = `WITH l AS (SELECT subs_version FROM event_lock WHERE id = 1 FOR UPDATE),
r AS (SELECT setval('events_seq', nextval('events_seq') + $1 - 1) AS last, subs_version FROM l),
e AS (INSERT INTO events (seq, record)
	SELECT r.last - $1 + x.ord, x.raw FROM r, unnest($2::bytea[]) WITH ORDINALITY AS x(raw, ord)),
d AS (INSERT INTO deliveries (subscription_id, seq, next_at, event)
	SELECT y.sub, r.last - $1 + y.ord, $5, y.raw FROM r, unnest($3::text[], $4::bigint[], $7::bytea[]) AS y(sub, ord, raw)
	WHERE r.subs_version = $6),
t AS (DELETE FROM events WHERE (SELECT last FROM r) > $8::bigint AND seq <= (SELECT last FROM r) - $8)
SELECT r.last, r.subs_version, (SELECT count(*) FROM (SELECT pg_notify($9, '') WHERE r.subs_version = $6 AND cardinality($3::text[]) > 0) n) FROM r`

// logEvents numbers and logs w's events, queues their webhook deliveries
// and trims the log, in w's transaction, just before its commit: one
// round trip, the lock held from it to the commit. Deliveries are matched
// against this store's copy of the subscriptions, valid while
// event_lock's version is the copy's (every change of subscriptions
// bumps it); when it is not, the list is read again and the deliveries
// queued in a second statement.
//
// The records are stored without their seq (the seq column is the seq:
// the range is known only in the statement); readers set it.
func (w *writeTx) logEvents() error {
	var logged []*aimemoryv1.Event
	for _, e := range w.events {
		if storage.LoggedEvent(e.GetType()) {
			logged = append(logged, e)
		}
	}
	if len(logged) == 0 && len(w.importedSubs) == 0 {
		return nil
	}
	if len(w.importedSubs) > 0 {
		// A change of subscriptions: bump the version (taking the lock).
		if err := bumpSubs(w); err != nil {
			return err
		}
	}
	raws := make([][]byte, len(logged))
	for i, e := range logged {
		e.Seq = 0
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
		if err != nil {
			return err
		}
		raws[i] = raw
	}
	version, subs := w.s.cachedSubs()
	dSubs, dOrds, dRaws := w.matchDeliveries(logged, raws, subs)
	if len(logged) == 0 {
		return w.startImported(0, false)
	}
	var last, have, notified int64
	err := w.tx.QueryRow(w.ctx, logStatement, len(logged), raws, dSubs, dOrds, w.now, version, dRaws,
		eventRetention, deliveryChannel).Scan(&last, &have, &notified)
	if err != nil {
		return err
	}
	first := last - int64(len(logged)) + 1
	for i, e := range logged {
		e.Seq = uint64(first + int64(i))
	}
	if len(w.importedSubs) > 0 {
		if err := w.startImported(last, true); err != nil {
			return err
		}
	}
	if have == version {
		return nil
	}
	// The copy is stale: read the list (this transaction holds the lock,
	// and a change committed after its snapshot would have failed it on
	// the lock row), and queue what the statement did not.
	if subs, err = loadSubs(w.ctx, w.tx); err != nil {
		return err
	}
	if len(w.importedSubs) == 0 {
		w.s.storeSubs(have, subs)
	}
	dSubs, dOrds, dRaws = w.matchDeliveries(logged, raws, subs)
	if len(dSubs) == 0 {
		return nil
	}
	seqs := make([]int64, len(dOrds))
	for i, o := range dOrds {
		seqs[i] = first + o - 1
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO deliveries (subscription_id, seq, next_at, event) SELECT y.sub, y.seq, $3, y.raw FROM unnest($1::text[], $2::bigint[], $4::bytea[]) AS y(sub, seq, raw)`,
		dSubs, seqs, w.now, dRaws)
	b.Queue(`SELECT pg_notify($1, '')`, deliveryChannel) // sent at commit: only a wake-up
	return w.tx.SendBatch(w.ctx, b).Close()
}

// matchDeliveries lists the deliveries of logged (encoded as raws) to
// subs, by the event's place in logged (from 1). The seqs are not known
// yet; every one is above any FromSeq a visible subscription has (those
// were read holding the lock), so matching takes it as the highest. The
// subscriptions this write imported receive none of its events.
func (w *writeTx) matchDeliveries(logged []*aimemoryv1.Event, raws [][]byte, subs []*storage.Subscription) (ids []string, ords []int64, rs [][]byte) {
	for i, e := range logged {
		seq := e.Seq
		e.Seq = 1<<64 - 1
		for _, sub := range subs {
			if sub.Matches(e) && !slices.Contains(w.importedSubs, sub.ID) {
				ids, ords, rs = append(ids, sub.ID), append(ords, int64(i+1)), append(rs, raws[i])
			}
		}
		e.Seq = seq
	}
	return ids, ords, rs
}

// subsCache is a store's copy of the subscriptions, at an event_lock version.
type subsCache struct {
	mu      sync.Mutex
	version int64 // -1: none yet
	subs    []*storage.Subscription
}

func (s *Store) cachedSubs() (int64, []*storage.Subscription) {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if s.subs.subs == nil && s.subs.version == 0 {
		return -1, nil
	}
	return s.subs.version, s.subs.subs
}

func (s *Store) storeSubs(version int64, subs []*storage.Subscription) {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if subs == nil {
		subs = []*storage.Subscription{}
	}
	s.subs.version, s.subs.subs = version, subs
}

// loadSubs reads every subscription in q.
func loadSubs(ctx context.Context, q pgx.Tx) ([]*storage.Subscription, error) {
	rows, err := q.Query(ctx, `SELECT record FROM subscriptions`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*storage.Subscription, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		sub := &storage.Subscription{}
		return sub, json.Unmarshal(raw, sub)
	})
}

// EventsAfter returns up to limit logged events with seq > after, oldest
// first. Seqs are visible in order (see above), so nothing this returns
// can be followed by a lower seq committing later.
func (s *Store) EventsAfter(ctx context.Context, after uint64, limit int) ([]*aimemoryv1.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, record FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`, int64(min(after, 1<<63-1)), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*aimemoryv1.Event, error) {
		var (
			seq int64
			raw []byte
		)
		if err := row.Scan(&seq, &raw); err != nil {
			return nil, err
		}
		e := &aimemoryv1.Event{}
		if err := proto.Unmarshal(raw, e); err != nil {
			return nil, err
		}
		e.Seq = uint64(seq)
		return e, nil
	})
}

// LastSeq is the seq of the newest logged event (0 if none yet).
func (s *Store) LastSeq(ctx context.Context) (uint64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM events`).Scan(&seq)
	return uint64(seq), err
}

// takenSeq is the last seq taken, read holding event_lock: every write
// that took one below it has committed or rolled back.
func takenSeq(ctx context.Context, tx pgx.Tx) (uint64, error) {
	var (
		last   int64
		called bool
	)
	err := tx.QueryRow(ctx, `SELECT last_value, is_called FROM events_seq`).Scan(&last, &called)
	if !called {
		last = 0
	}
	return uint64(last), err
}

// startImported sets the FromSeq of the subscriptions w imported past the
// events w logs (up to last when it logged any, taken holding the lock):
// they receive none of the import's own writes, as boltstore's
// startImported (logEvents there).
func (w *writeTx) startImported(last int64, logged bool) error {
	from := uint64(last)
	if !logged {
		var err error
		if from, err = takenSeq(w.ctx, w.tx); err != nil {
			return err
		}
	}
	_, err := w.tx.Exec(w.ctx, `UPDATE subscriptions SET record = jsonb_set(record, '{from_seq}', to_jsonb($1::bigint)) WHERE id = ANY($2)`,
		int64(from), w.importedSubs)
	return err
}
