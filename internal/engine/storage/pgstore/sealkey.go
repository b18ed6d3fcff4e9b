package pgstore

import (
	"context"
	"errors"
	"sync"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
)

// Subscriptions' secrets are sealed with the key of the data dir of the
// engine that made them (webhook.key), and any engine of the database may
// dispatch them, so every engine must hold the same key. The database
// records its key's fingerprint (table webhook_key): the first engine to
// bind records its own, and an engine holding another is told to copy the
// key file (storage.SealKeyMismatchError). Until then this store refuses
// subscriptions with a secret, which no other engine could open.

type sealKeyState struct {
	mu  sync.Mutex
	err error
}

// BindSealKey records fingerprint as the database's webhook key when it
// has none, and fails when it has another (storage.SealKeyBinder).
func (s *Store) BindSealKey(ctx context.Context, fingerprint string) error {
	if fingerprint == "" {
		return errors.New("webhook key fingerprint: must be set")
	}
	var have string
	err := s.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO webhook_key (id, fingerprint) VALUES (1, $1) ON CONFLICT (id) DO NOTHING RETURNING fingerprint)
		SELECT fingerprint FROM ins UNION ALL SELECT fingerprint FROM webhook_key WHERE id = 1 LIMIT 1`, fingerprint).Scan(&have)
	if err != nil {
		return err
	}
	var bad error
	if have != fingerprint {
		bad = &storage.SealKeyMismatchError{Database: have, Engine: fingerprint}
	}
	s.sealKey.mu.Lock()
	s.sealKey.err = bad
	s.sealKey.mu.Unlock()
	return bad
}

// sealKeyErr is the mismatch BindSealKey last found, if any.
func (s *Store) sealKeyErr() error {
	s.sealKey.mu.Lock()
	defer s.sealKey.mu.Unlock()
	return s.sealKey.err
}

// webhookKeyCapability reports whether this engine holds the database's
// webhook key (CapWebhookKey), for doctor.
func (s *Store) webhookKeyCapability() storage.Capability {
	if err := s.sealKeyErr(); err != nil {
		return storage.Capability{Name: storage.CapWebhookKey, On: false, Detail: err.Error()}
	}
	return storage.Capability{Name: storage.CapWebhookKey, On: true, Detail: "this engine's webhook.key is the database's: it may dispatch"}
}
