package pgstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Webhook subscriptions and the dispatcher's durable state
// (storage.Subscriptions), shared by every engine of the database.
//
// A delivery is attempted by one engine at a time: DueDeliveries claims
// the rows it returns (FOR UPDATE SKIP LOCKED, then claimed_by and a
// lease), and passes over rows another store claimed until the lease
// ends. SettleDelivery settles only a delivery this store still holds the
// claim of. So with no crash a delivery is attempted once, whichever
// engine dispatches; an engine that dies mid-attempt leaves its claims to
// run out, and another attempts them again (at least once, as with
// bbolt's restart). The lease is in the dispatcher's clock, which engines
// share to far better than claimLease.
//
// Writes read the subscriptions table; settling never writes it (the
// counters are in subscription_stats), and dispatcher calls run at READ
// COMMITTED, so dispatching causes writes no serialization failures.

// TakeOverClaims releases every claim another store holds
// (storage.ClaimTaker): called by the engine that has just become the
// dispatch leader, whose predecessor is gone. An attempt the dead engine
// had in flight is made again (at least once, as with bbolt's restart),
// now rather than after claimLease.
func (s *Store) TakeOverClaims(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE deliveries SET claimed_by = '', claimed_until = 0 WHERE claimed_by NOT IN ('', $1)`, s.claimID)
	return tag.RowsAffected(), err
}

var _ storage.ClaimTaker = (*Store)(nil)

// claimLease is how long a claim keeps other engines off a delivery:
// longer than an attempt may take (webhooks.timeout_ms is at most 60 s).
const claimLease = int64(2 * time.Minute)

// MaxDeadLetters is how many dead letters a subscription keeps, as boltstore's.
const MaxDeadLetters = 1000

func newClaimID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// PutSubscription stores a new subscription; it receives events logged
// after this transaction.
func (s *Store) PutSubscription(ctx context.Context, sub *storage.Subscription) error {
	if len(sub.SealedSecret) > 0 {
		if err := s.sealKeyErr(); err != nil {
			return err
		}
	}
	return s.write(ctx, func(w *writeTx) error {
		if err := bumpSubs(w); err != nil {
			return err
		}
		from, err := takenSeq(w.ctx, w.tx)
		if err != nil {
			return err
		}
		c := *sub
		c.FromSeq, c.Dispatched, c.Failed = from, 0, 0
		raw, err := json.Marshal(&c)
		if err != nil {
			return err
		}
		if _, err := w.tx.Exec(w.ctx, `INSERT INTO subscriptions (id, created_at, record) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, record = EXCLUDED.record`, c.ID, c.CreatedAt, raw); err != nil {
			return err
		}
		if _, err := w.tx.Exec(w.ctx, `INSERT INTO subscription_stats (id, dispatched, failed) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET dispatched = EXCLUDED.dispatched, failed = EXCLUDED.failed`,
			c.ID, int64(sub.Dispatched), int64(sub.Failed)); err != nil {
			return err
		}
		sub.FromSeq = from
		return nil
	})
}

// ListSubscriptions lists every subscription with its counters, newest first.
func (s *Store) ListSubscriptions(ctx context.Context) ([]*storage.Subscription, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.record, coalesce(st.dispatched, 0), coalesce(st.failed, 0)
		FROM subscriptions s LEFT JOIN subscription_stats st USING (id)`)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*storage.Subscription, error) {
		var (
			raw              []byte
			dispatched, fail int64
		)
		if err := row.Scan(&raw, &dispatched, &fail); err != nil {
			return nil, err
		}
		sub := &storage.Subscription{}
		if err := json.Unmarshal(raw, sub); err != nil {
			return nil, err
		}
		sub.Dispatched, sub.Failed = uint64(dispatched), uint64(fail)
		return sub, nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *storage.Subscription) int {
		if c := cmp.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// DeliveryState counts a subscription's pending deliveries and returns its
// counters and newest dead letters, all from one snapshot (REPEATABLE
// READ), so a dead letter is never seen without the failure that made it.
func (s *Store) DeliveryState(ctx context.Context, id string, most int) (st storage.DeliveryState, err error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return st, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var p, d, sent, failed int64
	err = tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM deliveries WHERE subscription_id = $1),
		(SELECT count(*) FROM dead_letters WHERE subscription_id = $1),
		coalesce((SELECT dispatched FROM subscription_stats WHERE id = $1), 0),
		coalesce((SELECT failed FROM subscription_stats WHERE id = $1), 0)`, id).Scan(&p, &d, &sent, &failed)
	if err != nil {
		return st, err
	}
	st.Pending, st.DeadCount, st.Dispatched, st.Failed = uint64(p), uint64(d), uint64(sent), uint64(failed)
	rows, err := tx.Query(ctx, `SELECT record FROM dead_letters WHERE subscription_id = $1 ORDER BY seq DESC LIMIT $2`, id, max(most, 0))
	if err != nil {
		return st, err
	}
	st.Dead, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*storage.DeadLetter, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return nil, err
		}
		dl := &aimemoryv1.DeadLetter{}
		return dl, proto.Unmarshal(raw, dl)
	})
	if err != nil {
		return st, err
	}
	return st, tx.Commit(ctx)
}

// DueDeliveries returns up to limit deliveries due at now that no other
// store holds a claim on, each subscription's earliest first, and claims
// them; next is the earliest NextAt not due yet, or the end of another
// store's claim, among the subscriptions it looked at (0: none).
func (s *Store) DueDeliveries(ctx context.Context, now int64, limit int, full func(string) bool, busy func(string, uint64) bool) ([]*storage.Delivery, int64, error) {
	if limit <= 0 {
		return nil, 0, nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, err := tx.Query(ctx, `SELECT id FROM subscriptions ORDER BY id`)
	if err != nil {
		return nil, 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, 0, err
	}
	var (
		out  []*storage.Delivery
		next int64
	)
	for _, sub := range ids {
		if len(out) >= limit {
			break
		}
		if full != nil && full(sub) {
			continue
		}
		var at int64
		err := tx.QueryRow(ctx, `SELECT coalesce(least(
				(SELECT min(next_at) FROM deliveries WHERE subscription_id = $1 AND next_at > $2),
				(SELECT min(claimed_until) FROM deliveries WHERE subscription_id = $1 AND next_at <= $2 AND claimed_by <> $3 AND claimed_until > $2)), 0)`,
			sub, now, s.claimID).Scan(&at)
		if err != nil {
			return nil, 0, err
		}
		if at != 0 && (next == 0 || at < next) {
			next = at
		}
		// Pages of the due rows free to claim, passing over the busy ones
		// (this dispatcher's attempts in flight: a few at most).
		afterAt, afterSeq := int64(-1<<63), int64(-1)
		for len(out) < limit {
			page := limit - len(out) + 4
			rows, err := tx.Query(ctx, `SELECT seq, next_at, attempts, last_error, event FROM deliveries
				WHERE subscription_id = $1 AND next_at <= $2 AND (claimed_by = $3 OR claimed_until <= $2) AND (next_at, seq) > ($4, $5)
				ORDER BY next_at, seq LIMIT $6 FOR UPDATE SKIP LOCKED`, sub, now, s.claimID, afterAt, afterSeq, page)
			if err != nil {
				return nil, 0, err
			}
			n := 0
			var (
				seq, nextAt int64
				attempts    int32
				lastErr     string
				raw         []byte
			)
			_, err = pgx.ForEachRow(rows, []any{&seq, &nextAt, &attempts, &lastErr, &raw}, func() error {
				n++
				afterAt, afterSeq = nextAt, seq
				if len(out) >= limit || (busy != nil && busy(sub, uint64(seq))) {
					return nil
				}
				e := &aimemoryv1.Event{}
				if err := proto.Unmarshal(raw, e); err != nil {
					return err
				}
				e.Seq = uint64(seq) // stored without it (events.go)
				out = append(out, &storage.Delivery{SubscriptionID: sub, Event: e, Attempts: uint32(attempts), NextAt: nextAt, LastError: lastErr})
				return nil
			})
			if err != nil {
				return nil, 0, err
			}
			if n < page {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, next, tx.Commit(ctx)
	}
	subs, seqs := make([]string, len(out)), make([]int64, len(out))
	for i, d := range out {
		subs[i], seqs[i] = d.SubscriptionID, int64(d.Event.GetSeq())
	}
	until := now + claimLease
	if until < now { // a far-future clock
		until = 1<<63 - 1
	}
	if _, err := tx.Exec(ctx, `UPDATE deliveries d SET claimed_by = $1, claimed_until = $2
		FROM unnest($3::text[], $4::bigint[]) AS c(sub, seq) WHERE d.subscription_id = c.sub AND d.seq = c.seq`,
		s.claimID, until, subs, seqs); err != nil {
		return nil, 0, err
	}
	return out, next, tx.Commit(ctx)
}

// SettleDelivery records an attempt's outcome: d is the delivery's new
// state. The row is keyed by subscription and seq, so queuedAt is not
// needed. A delivery whose subscription is gone, or whose claim another
// store has taken over (this one's lease ran out), is left alone.
func (s *Store) SettleDelivery(ctx context.Context, queuedAt int64, d *storage.Delivery, o storage.Outcome) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	sub, seq := d.SubscriptionID, int64(d.Event.GetSeq())
	const mine = `subscription_id = $1 AND seq = $2 AND claimed_by IN ($3, '')`
	var tag interface{ RowsAffected() int64 }
	switch o {
	case storage.Retry:
		tag, err = tx.Exec(ctx, `UPDATE deliveries SET attempts = $4, next_at = $5, last_error = $6, claimed_by = '', claimed_until = 0 WHERE `+mine,
			sub, seq, s.claimID, int32(d.Attempts), d.NextAt, d.LastError)
	default:
		tag, err = tx.Exec(ctx, `DELETE FROM deliveries WHERE `+mine, sub, seq, s.claimID)
	}
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return nil // gone with its subscription, or another store's now
	}
	if o == storage.Dropped {
		return tx.Commit(ctx)
	}
	counter := "failed"
	switch o {
	case storage.Delivered:
		counter = "dispatched"
	case storage.Dead:
		dl := &aimemoryv1.DeadLetter{Seq: d.Event.GetSeq(), Event: d.Event.GetType(), MemoryId: d.Event.GetMemoryId(),
			Attempts: d.Attempts, LastError: d.LastError, At: s.nowNanos()}
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(dl)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO dead_letters (subscription_id, seq, record) VALUES ($1, $2, $3)
			ON CONFLICT (subscription_id, seq) DO UPDATE SET record = EXCLUDED.record`, sub, seq, raw); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM dead_letters WHERE subscription_id = $1 AND seq IN
			(SELECT seq FROM dead_letters WHERE subscription_id = $1 ORDER BY seq DESC OFFSET $2)`, sub, MaxDeadLetters); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE subscription_stats SET `+counter+` = `+counter+` + 1 WHERE id = $1`, sub); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
