package assertion

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/sdk"
)

// HostCredentials attaches a freshly minted assertion to every engine call a
// host makes for itself (audit appends, the keeper's stream, doctor and
// the operator's CLI commands): family "host", speaking for principal in
// session, with the grant of every namespace.
func (s *Signer) HostCredentials(principal, session string) grpc.DialOption {
	return grpc.WithPerRPCCredentials(hostCreds{s: s, c: caller.Caller{Principal: principal, Session: session, Family: caller.HostFamily, Scope: caller.AllNamespaces}})
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

// ServerOptions are the engine's interceptors: every call must carry a valid
// assertion, and its caller is put into the handler's context.
func (s *Signer) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, err := s.authenticate(ctx)
			if err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			ctx, err := s.authenticate(ss.Context())
			if err != nil {
				return err
			}
			return h(srv, &authedStream{ServerStream: ss, ctx: ctx})
		}),
	}
}

func (s *Signer) authenticate(ctx context.Context) (context.Context, error) {
	var token string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(MetadataKey); len(v) == 1 {
			token = v[0]
		} else if len(v) > 1 {
			return nil, status.Error(codes.Unauthenticated, "engine call carries more than one caller assertion")
		}
	}
	c, err := s.Verify([]byte(token))
	if err != nil {
		msg := "engine call refused: " + err.Error()
		if errors.Is(err, ErrMissing) {
			msg += " (engine calls are made by ai-memory hosts, or by plugins inside a tool call they were handed)"
		}
		return nil, status.Error(codes.Unauthenticated, msg)
	}
	return caller.NewContext(ctx, c), nil
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a *authedStream) Context() context.Context { return a.ctx }

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
