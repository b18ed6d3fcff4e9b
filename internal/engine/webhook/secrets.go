package webhook

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/keyfile"
)

// SecretKeyFile holds the key that seals subscription secrets, in the data
// dir beside (never inside) the database file: a copy of memory.db alone
// does not give the secrets away.
const SecretKeyFile = "webhook.key"

// Sealer encrypts subscription secrets at rest (AES-256-GCM, the
// subscription id as associated data, so a sealed secret cannot be moved
// to another subscription).
type Sealer struct {
	aead        cipher.AEAD
	fingerprint string
}

// OpenSealer loads (or creates, race-free) the data dir's secret key.
func OpenSealer(dataDir string) (*Sealer, error) {
	key, err := keyfile.LoadOrCreate(dataDir, SecretKeyFile, "webhook secret key")
	if err != nil {
		return nil, err
	}
	return NewSealer(key)
}

// NewSealer seals with a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("ai-memory webhook.key fingerprint\x00"), key...))
	return &Sealer{aead: aead, fingerprint: hex.EncodeToString(sum[:8])}, nil
}

// Fingerprint names the key without giving it away: engines sharing one
// database compare it (storage.SealKeyBinder), since any of them may open
// a secret another sealed.
func (s *Sealer) Fingerprint() string { return s.fingerprint }

// Seal encrypts secret for subscription id: nonce followed by ciphertext.
func (s *Sealer) Seal(id string, secret []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, secret, []byte(id)), nil
}

// Open decrypts what Seal returned for id.
func (s *Sealer) Open(id string, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed secret too short")
	}
	out, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(id))
	if err != nil {
		return nil, errors.New("secret cannot be decrypted (was " + SecretKeyFile + " replaced?)")
	}
	return out, nil
}

// BindKey checks, on a store several engines share (storage.SealKeyBinder),
// that this engine's key is the database's, recording it if the database
// has none: a secret sealed by one engine must open on every other. A
// store of one engine's own (bbolt) is left alone.
func BindKey(ctx context.Context, st any, s *Sealer) error {
	b, ok := storage.As[storage.SealKeyBinder](st)
	if !ok || s == nil {
		return nil
	}
	return b.BindSealKey(ctx, s.Fingerprint())
}
