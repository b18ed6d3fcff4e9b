// Package assertion is how the engine learns who an engine call is for.
//
// An assertion is a token (principal, session, family, scope, the pid of
// the one process that may present it, expiry), signed with HMAC-SHA256
// under a key that only the engine and the hosts of a data dir read
// (D/engine.key, 0600; plugins run confined away from it). Two kinds:
//
//   - A host's own calls carry a host assertion (family "host"), minted
//     per process and reused while it is fresh.
//   - A tool call's assertion names the host's call session with the
//     engine and the call's number in it (Tracker, on the host's side). A
//     plugin receives it in CallContext.assertion, the sdk forwards it as
//     gRPC metadata, and the engine accepts it only from the plugin
//     process it was sent to and only until the host reports the call
//     ended (Gate, on the engine's side).
//
// A plugin never holds the key, so it cannot name another principal,
// family or call than the one it was handed, and the check costs one HMAC
// in the engine process: no extra hop.
package assertion

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// MetadataKey is the gRPC metadata key an assertion travels under.
const MetadataKey = aimemoryv1.AssertionMetadataKey

// DefaultTTL bounds how long a host assertion is accepted. A tool call's
// assertion ends with its call, and at the latest at the call's deadline.
const DefaultTTL = 10 * time.Minute

// maxTokenBytes caps what Verify will parse; a real token is ~300 bytes.
const maxTokenBytes = 4096

// claims is the signed payload.
type claims struct {
	Principal string `json:"p"`
	Session   string `json:"s,omitempty"`
	Family    string `json:"f"`
	Scope     string `json:"n,omitempty"`
	PID       int    `json:"i"`           // the process that may present it
	Calls     string `json:"k,omitempty"` // a tool call's: the host's call session
	Call      uint64 `json:"c,omitempty"` // and the call's number in it
	Expires   int64  `json:"e"`           // Unix nanoseconds
}

// Verified is what a valid token asserts.
type Verified struct {
	Caller caller.Caller
	PID    int    // the process that may present it
	Calls  string // the call session of a tool call's assertion ("" for a host's)
	Call   uint64
}

// Errors from Verify and the engine's checks; all mean "refuse the call".
var (
	ErrMissing     = errors.New("no caller assertion")
	ErrInvalid     = errors.New("caller assertion is not valid")
	ErrExpired     = errors.New("caller assertion has expired")
	ErrOtherPID    = errors.New("caller assertion was issued to another process")
	ErrCallEnded   = errors.New("the tool call this caller assertion was issued for has ended")
	ErrUnboundCall = errors.New("caller assertion names no tool call (only a host's own calls may)")
)

// Signer mints and verifies assertions under one key.
//
// Both sides remember their work. A host hands out the host assertion it
// minted for the same caller until half its lifetime has passed, and an
// engine remembers the tokens it verified, checking only their expiry when
// they come again (a tool call's token comes once per engine call of its
// tool call). Per call that saves the HMAC and JSON.
type Signer struct {
	key []byte
	now func() time.Time
	ttl time.Duration
	pid int // this process's

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
	return &Signer{key: append([]byte(nil), key...), now: now, ttl: DefaultTTL, pid: os.Getpid()}, nil
}

// Mint returns a host assertion for c, to be presented by this process
// only, valid for at least half of DefaultTTL (a fresh one, or the one
// minted for c less than DefaultTTL/2 ago). The engine accepts it only for
// family caller.HostFamily: a tool call's assertion comes from a Tracker.
func (s *Signer) Mint(c caller.Caller) []byte {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.minted[c]; ok && now.Add(s.ttl/2).UnixNano() < m.expires {
		return m.token
	}
	expires := now.Add(s.ttl).UnixNano()
	token := s.sign(claims{Principal: c.Principal, Session: c.Session, Family: c.Family, Scope: c.Scope, PID: s.pid, Expires: expires})
	if s.minted == nil || len(s.minted) >= maxRemembered {
		s.minted = map[caller.Caller]mintedToken{}
	}
	s.minted[c] = mintedToken{token: token, expires: expires}
	return token
}

// sign encodes and signs cl: base64url(JSON) "." base64url(HMAC).
func (s *Signer) sign(cl claims) []byte {
	payload, _ := json.Marshal(cl)
	enc := base64.RawURLEncoding
	out := make([]byte, 0, enc.EncodedLen(len(payload))+1+enc.EncodedLen(sha256.Size))
	out = enc.AppendEncode(out, payload)
	out = append(out, '.')
	return enc.AppendEncode(out, s.mac(payload))
}

// Verify checks a token's signature and expiry and returns what it
// asserts. Whether its process and call may present it now is the Gate's
// to check.
func (s *Signer) Verify(token []byte) (Verified, error) {
	if len(token) == 0 {
		return Verified{}, ErrMissing
	}
	if len(token) > maxTokenBytes {
		return Verified{}, ErrInvalid
	}
	s.mu.Lock()
	c, known := s.verified[string(token)]
	s.mu.Unlock()
	if !known {
		var err error
		if c, err = s.check(token); err != nil {
			return Verified{}, err
		}
		s.mu.Lock()
		if s.verified == nil || len(s.verified) >= maxRemembered {
			s.verified = map[string]claims{}
		}
		s.verified[string(token)] = c
		s.mu.Unlock()
	}
	if s.now().UnixNano() >= c.Expires {
		return Verified{}, ErrExpired
	}
	return Verified{
		Caller: caller.Caller{Principal: c.Principal, Session: c.Session, Family: c.Family, Scope: c.Scope},
		PID:    c.PID, Calls: c.Calls, Call: c.Call,
	}, nil
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
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(payload)) {
		return claims{}, ErrInvalid
	}
	var c claims
	if json.Unmarshal(payload, &c) != nil || c.Principal == "" || c.Family == "" || c.PID <= 0 {
		return claims{}, ErrInvalid
	}
	return c, nil
}

func (s *Signer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return m.Sum(nil)
}
