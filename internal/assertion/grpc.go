package assertion

import (
	"context"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/sdk"
)

// HostCredentials attaches a host assertion to every engine call a host
// makes for itself (audit appends, the keeper's call session, doctor):
// family "host", speaking for principal in session.
func (s *Signer) HostCredentials(principal, session string) grpc.DialOption {
	return grpc.WithPerRPCCredentials(hostCreds{s: s, c: caller.Caller{Principal: principal, Session: session, Family: caller.HostFamily}})
}

type hostCreds struct {
	s *Signer
	c caller.Caller
}

// GetRequestMetadata mints a host assertion, unless the call is made inside
// a tool call whose own assertion the sdk forwards (one client serving both,
// as in sdktest): the tool call's caller is the one the engine must see.
func (h hostCreds) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	if sdk.CallAssertion(ctx) != "" {
		return nil, nil
	}
	return map[string]string{MetadataKey: string(h.s.Mint(h.c))}, nil
}

// RequireTransportSecurity is false: the engine socket is a same-user unix
// socket (see docs/ARCHITECTURE.md), and the token is signed, not secret-bearing.
func (hostCreds) RequireTransportSecurity() bool { return false }

// HostDial is the dial option a host process uses for its own engine calls
// on dataDir, creating the data dir's key on first use.
func HostDial(dataDir, principal, session string) (grpc.DialOption, error) {
	key, err := LoadOrCreateKey(dataDir)
	if err != nil {
		return nil, err
	}
	s, err := NewSigner(key, nil)
	if err != nil {
		return nil, err
	}
	return s.HostCredentials(principal, session), nil
}
