// Package assertion is how the engine learns who an engine call is for.
//
// A host mints a short-lived assertion per tool call (principal, session,
// family, expiry), signed with HMAC-SHA256 under a key that only the engine
// and the hosts of a data dir read (D/engine.key, 0600). The host hands it to
// the plugin in CallContext.assertion; the plugin's engine client forwards it
// as gRPC metadata; the engine verifies it and puts the caller into the
// request context. A plugin never holds the key, so it cannot name another
// principal or family than the one it was called for, and the check costs
// one HMAC in the engine process: no extra hop.
package assertion

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// MetadataKey is the gRPC metadata key an assertion travels under.
const MetadataKey = aimemoryv1.AssertionMetadataKey

// DefaultTTL bounds how long a minted assertion is accepted: longer than any
// tool call should take, short enough that a leaked one soon goes stale.
const DefaultTTL = 10 * time.Minute

// maxTokenBytes caps what Verify will parse; a real token is ~200 bytes.
const maxTokenBytes = 4096

// claims is the signed payload.
type claims struct {
	Principal string `json:"p"`
	Session   string `json:"s,omitempty"`
	Family    string `json:"f"`
	Scope     string `json:"n,omitempty"`
	Expires   int64  `json:"e"` // Unix nanoseconds
}

// Errors from Verify; all mean "refuse the call".
var (
	ErrMissing = errors.New("no caller assertion")
	ErrInvalid = errors.New("caller assertion is not valid")
	ErrExpired = errors.New("caller assertion has expired")
)

// Signer mints and verifies assertions under one key.
//
// Both sides remember their work. A host hands out the token it minted for
// the same caller until half its lifetime has passed (a token names no
// call, so a reused one grants nothing a fresh one would not, and it still
// expires at most DefaultTTL after it was minted), and an engine remembers
// the tokens it verified, checking only their expiry when they come again.
// Per call that saves the HMAC and JSON on both sides and, since the gRPC
// header value repeats, its HPACK encoding: about 3% of the CPU of a call.
type Signer struct {
	key []byte
	now func() time.Time
	ttl time.Duration

	mu       sync.Mutex
	minted   map[caller.Caller]mintedToken
	verified map[string]claims // token → its claims, signature checked
}

type mintedToken struct {
	token   []byte
	expires int64 // Unix nanoseconds
}

// maxRemembered bounds each memory; when full it starts afresh.
const maxRemembered = 1024

// NewSigner returns a signer for key (at least 32 bytes). now may be nil
// (the wall clock); tests inject their own.
func NewSigner(key []byte, now func() time.Time) (*Signer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("assertion key: must be at least 32 bytes (got %d)", len(key))
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{key: append([]byte(nil), key...), now: now, ttl: DefaultTTL}, nil
}

// Mint returns a token asserting c, valid for at least half of DefaultTTL
// (a fresh one, or the one minted for c less than DefaultTTL/2 ago).
func (s *Signer) Mint(c caller.Caller) []byte {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.minted[c]; ok && now.Add(s.ttl/2).UnixNano() < m.expires {
		return m.token
	}
	token := s.mint(c, now)
	if s.minted == nil || len(s.minted) >= maxRemembered {
		s.minted = map[caller.Caller]mintedToken{}
	}
	s.minted[c] = mintedToken{token: token, expires: now.Add(s.ttl).UnixNano()}
	return token
}

func (s *Signer) mint(c caller.Caller, now time.Time) []byte {
	payload, _ := json.Marshal(claims{Principal: c.Principal, Session: c.Session, Family: c.Family, Scope: c.Scope, Expires: now.Add(s.ttl).UnixNano()})
	enc := base64.RawURLEncoding
	out := make([]byte, 0, enc.EncodedLen(len(payload))+1+enc.EncodedLen(sha256.Size))
	out = enc.AppendEncode(out, payload)
	out = append(out, '.')
	return enc.AppendEncode(out, s.sign(payload))
}

// Verify checks a token's signature and expiry and returns its caller.
func (s *Signer) Verify(token []byte) (caller.Caller, error) {
	if len(token) == 0 {
		return caller.Caller{}, ErrMissing
	}
	if len(token) > maxTokenBytes {
		return caller.Caller{}, ErrInvalid
	}
	s.mu.Lock()
	c, known := s.verified[string(token)]
	s.mu.Unlock()
	if !known {
		var err error
		if c, err = s.check(token); err != nil {
			return caller.Caller{}, err
		}
		s.mu.Lock()
		if s.verified == nil || len(s.verified) >= maxRemembered {
			s.verified = map[string]claims{}
		}
		s.verified[string(token)] = c
		s.mu.Unlock()
	}
	if s.now().UnixNano() >= c.Expires {
		return caller.Caller{}, ErrExpired
	}
	return caller.Caller{Principal: c.Principal, Session: c.Session, Family: c.Family, Scope: c.Scope}, nil
}

// check verifies a token's signature and claims, not its expiry.
func (s *Signer) check(token []byte) (claims, error) {
	dot := -1
	for i, b := range token {
		if b == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		return claims{}, ErrInvalid
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(string(token[:dot]))
	mac, err2 := enc.DecodeString(string(token[dot+1:]))
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.sign(payload)) {
		return claims{}, ErrInvalid
	}
	var c claims
	if json.Unmarshal(payload, &c) != nil || c.Principal == "" || c.Family == "" {
		return claims{}, ErrInvalid
	}
	return c, nil
}

func (s *Signer) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return m.Sum(nil)
}
