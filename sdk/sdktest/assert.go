package sdktest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"

	"google.golang.org/grpc"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
)

// mint signs the per-call assertion a host hands a plugin, in the engine's
// format (base64url(claims) "." base64url(HMAC-SHA256)), with the data
// dir's key. The host's internal/assertion owns the format; a test in the
// main module checks the two agree. Like a stdio host, it grants every
// namespace ("*"): an engine grants none to an assertion without a scope.
func mint(key []byte, principal, session, family string) []byte {
	payload, _ := json.Marshal(struct {
		Principal string `json:"p"`
		Session   string `json:"s,omitempty"`
		Family    string `json:"f"`
		Scope     string `json:"n"`
		Expires   int64  `json:"e"`
	}{principal, session, family, "*", time.Now().Add(time.Hour).UnixNano()})
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	enc := base64.RawURLEncoding
	return []byte(enc.EncodeToString(payload) + "." + enc.EncodeToString(m.Sum(nil)))
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
	if sdk.CallAssertion(ctx) != "" {
		return nil, nil
	}
	return map[string]string{aimemoryv1.AssertionMetadataKey: string(mint(c.key, c.principal, c.session, "host"))}, nil
}

func (creds) RequireTransportSecurity() bool { return false }
