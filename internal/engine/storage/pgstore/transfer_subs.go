package pgstore

import (
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Subscriptions in Export and Import (the transfer is pgxfer's). Their
// secrets travel sealed; the Transfer service re-seals them for the
// importing engine's key before they get here.

// importSubscription writes a webhook subscription with its secret as the
// caller sealed it: "created", "unchanged" (same id, target and filters,
// whatever its sealed bytes), or a refusal (ops.ImportRefusal: errors.As)
// that writes nothing. It receives the events logged after the import's
// transaction, with no delivery history (logEvents, startImported).
func (w *writeTx) ImportSubscription(in *aimemoryv1.WebhookSubscription) (string, error) {
	sub, err := ops.ImportedSubscription(in)
	if err != nil {
		return "", err
	}
	if len(sub.SealedSecret) > 0 {
		if err := w.s.sealKeyErr(); err != nil {
			return "", ops.Refuse(err)
		}
	}
	var raw []byte
	err = w.tx.QueryRow(w.ctx, `SELECT record FROM subscriptions WHERE id = $1`, sub.ID).Scan(&raw)
	switch {
	case err == nil:
		old := &storage.Subscription{}
		if err := json.Unmarshal(raw, old); err != nil {
			return "", err
		}
		return ops.ImportOverExisting(old, sub)
	case !errors.Is(err, pgx.ErrNoRows):
		return "", err
	}
	if raw, err = json.Marshal(sub); err != nil {
		return "", err
	}
	if _, err := w.tx.Exec(w.ctx, `INSERT INTO subscriptions (id, created_at, record) VALUES ($1, $2, $3)`, sub.ID, sub.CreatedAt, raw); err != nil {
		return "", err
	}
	if _, err := w.tx.Exec(w.ctx, `INSERT INTO subscription_stats (id) VALUES ($1)`, sub.ID); err != nil {
		return "", err
	}
	w.importedSubs = append(w.importedSubs, sub.ID)
	return "created", nil
}
