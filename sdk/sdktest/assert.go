package sdktest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// claims are an assertion's, in the engine's format (base64url(claims) "."
// base64url(HMAC-SHA256) under the data dir's key). The host's
// internal/assertion owns the format; the tests run against the real
// engine, which refuses anything else. Like a stdio host, sdktest grants
// every namespace ("*"): an engine grants none to an assertion without
// a scope.
type claims struct {
	Principal string `json:"p"`
	Session   string `json:"s,omitempty"`
	Family    string `json:"f"`
	Scope     string `json:"n,omitempty"`
	PID       int    `json:"i"` // the process that presents it: this one
	Calls     string `json:"k,omitempty"`
}

// mint is the token P "." call "." expiry "." MAC: P the claims' JSON,
// the MAC an HMAC-SHA256 of what precedes it, both base64url.
func mint(key []byte, c claims, call uint64) []byte {
	c.PID = os.Getpid()
	payload, _ := json.Marshal(c)
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(payload) + "." + strconv.FormatUint(call, 10) + "." + strconv.FormatInt(time.Now().Add(time.Hour).UnixNano(), 10)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return []byte(signed + "." + enc.EncodeToString(m.Sum(nil)))
}

// hostCredentials sends a host's own assertion (family "host") with every call.
func hostCredentials(key []byte, principal, session string) grpc.DialOption {
	return grpc.WithPerRPCCredentials(creds{key: key, principal: principal, session: session})
}

type creds struct {
	key                []byte
	principal, session string
}

// GetRequestMetadata yields to a tool call's own assertion, which the sdk
// forwards when a handler uses this same client: that caller is the one
// the engine must see.
func (c creds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	if wire.CallAssertion(ctx) != "" {
		return nil, nil
	}
	return map[string]string{aimemoryv1.AssertionMetadataKey: string(mint(c.key, claims{Principal: c.principal, Session: c.session, Family: "host", Scope: "*"}, 0))}, nil
}

func (creds) RequireTransportSecurity() bool { return false }

// calls is the test's call session with its engine, as a host keeps one:
// a tool call's assertion names the session and the call, and is accepted
// until the call is reported ended.
type calls struct {
	mu      sync.Mutex
	stream  aimemoryv1.Calls_TrackClient
	session string
	next    uint64
}

func openCalls(ctx context.Context, conn *wire.EngineConn) (*calls, error) {
	stream, err := conn.Track(ctx)
	if err != nil {
		return nil, err
	}
	first, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	if first.GetSession() == "" {
		return nil, errors.New("the engine opened a call session without an id")
	}
	return &calls{stream: stream, session: first.GetSession()}, nil
}

// begin returns the claims of the session's next call, and its number.
func (c *calls) begin(principal, family string) (claims, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return claims{Principal: principal, Session: "s1", Family: family, Scope: "*", Calls: c.session}, c.next
}

// end reports call n ended and waits until the engine applied it (a
// host waits only before another principal's call; a test, always).
func (c *calls) end(n uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.stream.Send(&aimemoryv1.TrackRequest{Ended: []uint64{n}, Sync: n}); err != nil {
		return err
	}
	_, err := c.stream.Recv()
	return err
}
