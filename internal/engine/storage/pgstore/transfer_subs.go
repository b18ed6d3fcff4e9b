package pgstore

import (
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

// addSubscription writes sub with its delivery counters; it receives the
// events logged after its transaction's own (logEvents, startImported). A
// sealed secret needs this database's seal key bound (sealkey.go).
func (t opsTx) addSubscription(sub *storage.Subscription) error {
	if len(sub.SealedSecret) > 0 {
		if err := t.w.s.sealKeyErr(); err != nil {
			return ops.Refuse(err)
		}
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
