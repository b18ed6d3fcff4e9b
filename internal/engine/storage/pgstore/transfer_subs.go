package pgstore

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
)

// Subscriptions as Import writes them. Their secrets travel sealed; the
// Transfer service re-seals them for the importing engine's key before
// they get here.

func (t opsTx) subscription(id string) (*storage.Subscription, error) {
	var raw []byte
	err := t.w.tx.QueryRow(t.w.ctx, `SELECT record FROM subscriptions WHERE id = $1`, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sub := &storage.Subscription{}
	return sub, json.Unmarshal(raw, sub)
}

// addSubscription writes sub; a new one with its delivery counters,
// receiving the events logged after its transaction's own (logEvents,
// startImported); an existing one keeps its start point, counters
// (subscription_stats) and queue. A sealed secret needs this database's
// seal key bound (sealkey.go).
func (t opsTx) addSubscription(sub *storage.Subscription) error {
	old, err := t.subscription(sub.ID)
	if err != nil {
		return err
	}
	if len(sub.SealedSecret) > 0 && (old == nil || !bytes.Equal(old.SealedSecret, sub.SealedSecret)) {
		if err := t.w.s.sealKeyErr(); err != nil {
			return ops.Refuse(err)
		}
	}
	if old != nil {
		c := *sub
		c.FromSeq, c.Dispatched, c.Failed = old.FromSeq, old.Dispatched, old.Failed
		raw, err := json.Marshal(&c)
		if err != nil {
			return err
		}
		if err := bumpSubs(t.w); err != nil {
			return err
		}
		_, err = t.w.tx.Exec(t.w.ctx, `UPDATE subscriptions SET created_at = $2, record = $3 WHERE id = $1`, c.ID, c.CreatedAt, raw)
		return err
	}
	raw, err := json.Marshal(sub)
	if err != nil {
		return err
	}
	if _, err := t.w.tx.Exec(t.w.ctx, `INSERT INTO subscriptions (id, created_at, record) VALUES ($1, $2, $3)`, sub.ID, sub.CreatedAt, raw); err != nil {
		return err
	}
	if _, err := t.w.tx.Exec(t.w.ctx, `INSERT INTO subscription_stats (id) VALUES ($1)`, sub.ID); err != nil {
		return err
	}
	t.w.importedSubs = append(t.w.importedSubs, sub.ID)
	return nil
}

// bumpSubs marks a change of the subscriptions: updating the lock row
// waits for writes holding it and fails those that matched events against
// the set before this change (events.go).
func bumpSubs(w *writeTx) error {
	_, err := w.tx.Exec(w.ctx, `UPDATE event_lock SET subs_version = subs_version + 1 WHERE id = 1`)
	return err
}
