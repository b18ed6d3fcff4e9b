package pgstore

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
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

// eventRetention is storage.EventRetention (a test lowers it).
var eventRetention int64 = storage.EventRetention

// deliveryChannel is the NOTIFY channel a write that queued deliveries
// wakes dispatchers with (deliverywake.go).
const deliveryChannel = "ai_memory_deliveries"

// logEvents numbers and logs w's events, queues their webhook deliveries
// and trims the log, in w's transaction, just before its commit.
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
	// One round trip: the lock, the seqs, the subscriptions (read after
	// the lock: a subscription change updates its row, so a write that
	// read the old list fails to lock it and is retried). A write that
	// imported subscriptions is such a change.
	lock := `SELECT 1 FROM event_lock WHERE id = 1 FOR UPDATE`
	if len(w.importedSubs) > 0 {
		lock = `UPDATE event_lock SET subs_version = subs_version + 1 WHERE id = 1`
	}
	b := &pgx.Batch{}
	b.Queue(lock)
	b.Queue(`SELECT nextval('events_seq') FROM generate_series(1, $1)`, len(logged))
	b.Queue(`SELECT record FROM subscriptions`)
	res := w.tx.SendBatch(w.ctx, b)
	if _, err := res.Exec(); err != nil {
		res.Close()
		return err
	}
	seqs, err := pgx.CollectRows(mustQuery(res), pgx.RowTo[int64])
	if err != nil {
		res.Close()
		return err
	}
	subs, err := pgx.CollectRows(mustQuery(res), func(row pgx.CollectableRow) (*storage.Subscription, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		sub := &storage.Subscription{}
		return sub, json.Unmarshal(raw, sub)
	})
	if err := res.Close(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if len(w.importedSubs) > 0 {
		if err := w.startImported(seqs); err != nil {
			return err
		}
		subs = slices.DeleteFunc(subs, func(s *storage.Subscription) bool { return slices.Contains(w.importedSubs, s.ID) })
	}
	if len(logged) == 0 {
		return nil
	}

	var (
		evSeqs       = make([]int64, len(logged))
		evRaws       = make([][]byte, len(logged))
		dSubs        []string
		dSeqs, dNext []int64
		dRaws        [][]byte
	)
	for i, e := range logged {
		e.Seq = uint64(seqs[i])
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
		if err != nil {
			return err
		}
		evSeqs[i], evRaws[i] = seqs[i], raw
		for _, sub := range subs {
			if sub.Matches(e) {
				dSubs, dSeqs, dNext, dRaws = append(dSubs, sub.ID), append(dSeqs, seqs[i]), append(dNext, w.now), append(dRaws, raw)
			}
		}
	}
	b = &pgx.Batch{}
	b.Queue(`INSERT INTO events (seq, record) SELECT * FROM unnest($1::bigint[], $2::bytea[])`, evSeqs, evRaws)
	if len(dSubs) > 0 {
		b.Queue(`INSERT INTO deliveries (subscription_id, seq, next_at, event) SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bytea[])`,
			dSubs, dSeqs, dNext, dRaws)
		b.Queue(`SELECT pg_notify($1, '')`, deliveryChannel) // sent at commit: only a wake-up
	}
	if cut := seqs[len(seqs)-1] - eventRetention; cut > 0 {
		b.Queue(`DELETE FROM events WHERE seq <= $1`, cut)
	}
	return w.tx.SendBatch(w.ctx, b).Close()
}

// mustQuery reads the next result of a batch as rows (an error shows in
// the rows' Err).
func mustQuery(res pgx.BatchResults) pgx.Rows {
	rows, _ := res.Query()
	return rows
}

// EventsAfter returns up to limit logged events with seq > after, oldest
// first. Seqs are visible in order (see above), so nothing this returns
// can be followed by a lower seq committing later.
func (s *Store) EventsAfter(ctx context.Context, after uint64, limit int) ([]*aimemoryv1.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT record FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`, int64(min(after, 1<<63-1)), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*aimemoryv1.Event, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		e := &aimemoryv1.Event{}
		return e, proto.Unmarshal(raw, e)
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
// events w logs (seqs, taken holding the lock): they receive none of the
// import's own writes, as boltstore's startAfterImport.
func (w *writeTx) startImported(seqs []int64) error {
	var from uint64
	if len(seqs) > 0 {
		from = uint64(seqs[len(seqs)-1])
	} else {
		var err error
		if from, err = takenSeq(w.ctx, w.tx); err != nil {
			return err
		}
	}
	_, err := w.tx.Exec(w.ctx, `UPDATE subscriptions SET record = jsonb_set(record, '{from_seq}', to_jsonb($1::bigint)) WHERE id = ANY($2)`,
		int64(from), w.importedSubs)
	return err
}
