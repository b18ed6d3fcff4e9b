package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"

	"github.com/ai-memory/ai-memory/internal/keyfile"
)

// SecretKeyFile holds the key that seals subscription secrets, in the data
// dir beside (never inside) the database file: a copy of memory.db alone
// does not give the secrets away.
const SecretKeyFile = "webhook.key"

// Sealer encrypts subscription secrets at rest (AES-256-GCM, the
// subscription id as associated data, so a sealed secret cannot be moved
// to another subscription).
type Sealer struct{ aead cipher.AEAD }

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
	return &Sealer{aead: aead}, nil
}

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
