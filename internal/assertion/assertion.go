// Package assertion is how the engine learns who an engine call is for.
//
// An assertion is a token (principal, session, family, scope, the pid of
// the one process that may present it, expiry), signed with HMAC-SHA256
// under a key that only the engine and the hosts of a data dir read
// (D/engine.key, 0600; plugins run confined away from it). Two kinds:
//
//   - A host's own calls carry a host assertion (family "host"), minted
//     per call.
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
//
// The token is P "." C "." E "." M: P the base64url JSON of what stays the
// same across one caller's calls to one process (who, which process, which
// session), C the call's number (0 for a host's), E the expiry (Unix
// nanoseconds), M the base64url HMAC of everything before it.
package assertion

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// MetadataKey is the gRPC metadata key an assertion travels under.
const MetadataKey = aimemoryv1.AssertionMetadataKey

// DefaultTTL bounds how long a host assertion is accepted. A tool call's
// assertion ends with its call, and at the latest at the call's deadline.
const DefaultTTL = 10 * time.Minute

// maxTokenBytes caps what Verify will parse; a real token is ~300 bytes.
const maxTokenBytes = 4096

// static is the signed JSON part P: the same for every call of one caller
// on one process in one session.
type static struct {
	Principal string `json:"p"`
	Session   string `json:"s,omitempty"`
	Family    string `json:"f"`
	Scope     string `json:"n,omitempty"`
	PID       int    `json:"i"`           // the process that may present it
	Calls     string `json:"k,omitempty"` // a tool call's: the host's call session
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
type Signer struct {
	key  []byte
	now  func() time.Time
	ttl  time.Duration
	pid  int // this process's
	macs sync.Pool
}

// NewSigner returns a signer for key (at least 32 bytes). now may be nil
// (the wall clock); tests inject their own.
func NewSigner(key []byte, now func() time.Time) (*Signer, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("assertion key: must be at least 32 bytes (got %d)", len(key))
	}
	if now == nil {
		now = time.Now
	}
	s := &Signer{key: append([]byte(nil), key...), now: now, ttl: DefaultTTL, pid: os.Getpid()}
	s.macs.New = func() any { return hmac.New(sha256.New, s.key) }
	return s, nil
}

// Mint returns a host assertion for c, to be presented by this process
// only, valid for DefaultTTL. The engine accepts it only for family
// caller.HostFamily: a tool call's assertion comes from a Tracker.
func (s *Signer) Mint(c caller.Caller) []byte {
	expires := s.now().Add(s.ttl).UnixNano()
	return s.sign(static{Principal: c.Principal, Session: c.Session, Family: c.Family, Scope: c.Scope, PID: s.pid}, 0, expires)
}

// sign builds and signs the token of st, call and expiry.
func (s *Signer) sign(st static, call uint64, expires int64) []byte {
	raw, _ := json.Marshal(st)
	out := make([]byte, 0, base64.RawURLEncoding.EncodedLen(len(raw))+64)
	out = base64.RawURLEncoding.AppendEncode(out, raw)
	out = append(out, '.')
	out = strconv.AppendUint(out, call, 10)
	out = append(out, '.')
	out = strconv.AppendInt(out, expires, 10)
	var sum [sha256.Size]byte
	mac := s.mac(out, sum[:0])
	out = append(out, '.')
	return base64.RawURLEncoding.AppendEncode(out, mac)
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
	signed, mac, ok := cutLast(string(token))
	var sum [sha256.Size]byte
	got := make([]byte, 0, sha256.Size+1)
	got, err := base64.RawURLEncoding.AppendDecode(got, []byte(mac))
	if !ok || err != nil || !hmac.Equal(got, s.mac([]byte(signed), sum[:0])) {
		return Verified{}, ErrInvalid
	}
	p, rest, _ := strings.Cut(signed, ".")
	c, e, _ := strings.Cut(rest, ".")
	call, err1 := strconv.ParseUint(c, 10, 64)
	expires, err2 := strconv.ParseInt(e, 10, 64)
	st, err3 := s.decode(p)
	if err1 != nil || err2 != nil || err3 != nil {
		return Verified{}, ErrInvalid
	}
	if s.now().UnixNano() >= expires {
		return Verified{}, ErrExpired
	}
	return Verified{
		Caller: caller.Caller{Principal: st.Principal, Session: st.Session, Family: st.Family, Scope: st.Scope},
		PID:    st.PID, Calls: st.Calls, Call: call,
	}, nil
}

// decode is the static part P of a token whose signature checked.
func (s *Signer) decode(p string) (static, error) {
	var st static
	raw, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil || json.Unmarshal(raw, &st) != nil || st.Principal == "" || st.Family == "" || st.PID <= 0 {
		return static{}, ErrInvalid
	}
	return st, nil
}

// cutLast splits a token at its last dot: what is signed, and the MAC.
func cutLast(token string) (signed, mac string, ok bool) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 || strings.Count(token[:i], ".") != 2 {
		return "", "", false
	}
	return token[:i], token[i+1:], true
}

// mac appends the HMAC of data under the key to out.
func (s *Signer) mac(data, out []byte) []byte {
	m := s.macs.Get().(hash.Hash)
	m.Reset()
	m.Write(data)
	out = m.Sum(out)
	s.macs.Put(m)
	return out
}
