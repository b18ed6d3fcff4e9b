package assertion

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Gate is the engine's side: every call must carry a valid assertion,
// presented by the process it names, and a tool call's assertion only
// while its call is in flight in an open session of its host (Track).
// Its caller is put into the handler's context.
type Gate struct {
	aimemoryv1.UnimplementedCallsServer
	s *Signer

	mu       sync.RWMutex
	sessions map[string]*callSession
}

// NewGate returns the gate of an engine whose key signs s.
func NewGate(s *Signer) *Gate { return &Gate{s: s, sessions: map[string]*callSession{}} }

// hostOnly are the methods only a host's own calls may make: what the
// operator's commands use, and the hosts' call sessions. A plugin reaches
// memory through the record APIs and their checks.
var hostOnly = map[string]bool{
	aimemoryv1.Audit_AppendAudit_FullMethodName: true, // a forged audit record
	aimemoryv1.Audit_ListAudit_FullMethodName:   true, // every principal's decisions
	aimemoryv1.Audit_VerifyAudit_FullMethodName: true,
	aimemoryv1.Transfer_Export_FullMethodName:   true, // the whole store
	aimemoryv1.Transfer_Import_FullMethodName:   true,
	aimemoryv1.Engine_Backup_FullMethodName:     true,
	aimemoryv1.Engine_Metrics_FullMethodName:    true, // the data dir's, not a principal's
	aimemoryv1.Vectors_Backfill_FullMethodName:  true, // `ai-memory reindex`: paid model calls
	aimemoryv1.Calls_Track_FullMethodName:       true,
}

// PeerPID is what the engine's transport puts into a connection's
// peer.AuthInfo where the OS tells it the pid of the process at the other
// end (SO_PEERCRED on Linux).
type PeerPID interface{ PeerPID() int }

// ServerOptions are the engine's interceptors.
func (g *Gate) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			ctx, _, err := g.authenticate(ctx, info.FullMethod)
			if err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			ctx, v, err := g.authenticate(ss.Context(), info.FullMethod)
			if err != nil {
				return err
			}
			if v.Calls != "" {
				// A stream opened in a tool call (an event watch) ends with it.
				var stop func()
				if ctx, stop, err = g.bindToCall(ctx, v); err != nil {
					return err
				}
				defer stop()
			}
			return h(srv, &authedStream{ServerStream: ss, ctx: ctx})
		}),
	}
}

func (g *Gate) authenticate(ctx context.Context, method string) (context.Context, Verified, error) {
	var token string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get(MetadataKey); len(v) == 1 {
			token = v[0]
		} else if len(v) > 1 {
			return nil, Verified{}, status.Error(codes.Unauthenticated, "engine call carries more than one caller assertion")
		}
	}
	v, err := g.s.Verify([]byte(token))
	if err == nil {
		err = g.admit(ctx, v)
	}
	if err != nil {
		msg := "engine call refused: " + err.Error()
		if errors.Is(err, ErrMissing) {
			msg += " (engine calls are made by ai-memory hosts, or by plugins inside a tool call they were handed)"
		}
		return nil, Verified{}, status.Error(codes.Unauthenticated, msg)
	}
	return caller.NewContext(ctx, v.Caller), v, nil
}

// HostOnly are the interceptors that refuse a plugin the host-only
// methods. They run after the caller is known (and noted for the audit of
// the refusal), so they are separate from ServerOptions.
func (g *Gate) HostOnly() []grpc.ServerOption {
	check := func(ctx context.Context, method string) error {
		if c, _ := caller.FromContext(ctx); hostOnly[method] && !c.IsHost() {
			return status.Errorf(codes.PermissionDenied, "%s: only an ai-memory host may call it; a plugin reaches memory through the record APIs", method)
		}
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := check(ctx, info.FullMethod); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := check(ss.Context(), info.FullMethod); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// admit checks that the connection's process may present v now.
func (g *Gate) admit(ctx context.Context, v Verified) error {
	if p, ok := peer.FromContext(ctx); ok {
		if pp, ok := p.AuthInfo.(PeerPID); ok && pp.PeerPID() != v.PID {
			return ErrOtherPID
		}
	}
	if v.Calls == "" {
		if !v.Caller.IsHost() {
			return ErrUnboundCall
		}
		return nil
	}
	if s := g.session(v.Calls); s == nil || !s.live(v.Call) {
		return ErrCallEnded
	}
	return nil
}

func (g *Gate) session(id string) *callSession {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.sessions[id]
}

// bindToCall returns ctx cancelled when v's call ends, and the func that
// stops watching for it.
func (g *Gate) bindToCall(ctx context.Context, v Verified) (context.Context, func(), error) {
	s := g.session(v.Calls)
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{cancel: cancel}
	if s == nil || !s.watch(v.Call, w) {
		cancel()
		return nil, nil, status.Error(codes.Unauthenticated, "engine call refused: "+ErrCallEnded.Error())
	}
	return ctx, func() { s.unwatch(v.Call, w); cancel() }, nil
}

// Track serves a host's call session (see calls.proto).
func (g *Gate) Track(stream aimemoryv1.Calls_TrackServer) error {
	var raw [16]byte
	rand.Read(raw[:])
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	s := &callSession{low: 1, ended: map[uint64]struct{}{}, watchers: map[uint64]map[*watcher]struct{}{}}
	g.mu.Lock()
	g.sessions[id] = s
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.sessions, id)
		g.mu.Unlock()
		s.close()
	}()
	if err := stream.Send(&aimemoryv1.TrackResponse{Session: id}); err != nil {
		return err
	}
	for {
		req, err := stream.Recv()
		if err != nil {
			return nil // the host went away, and its session with it
		}
		for _, n := range req.GetEnded() {
			s.retire(n)
		}
		if req.GetSync() != 0 {
			if err := stream.Send(&aimemoryv1.TrackResponse{Synced: req.GetSync()}); err != nil {
				return err
			}
		}
	}
}

// callSession is one host's calls: numbers are handed out from 1 up and
// mostly end in order, so what is kept is a watermark and the few calls
// that ended ahead of an older one still running.
type callSession struct {
	mu       sync.Mutex
	closed   bool
	low      uint64                           // every call numbered below low has ended
	ended    map[uint64]struct{}              // calls numbered low or above that ended
	watchers map[uint64]map[*watcher]struct{} // streams opened in a call
}

// watcher is a stream opened in a tool call, cancelled when the call ends.
type watcher struct{ cancel context.CancelFunc }

func (s *callSession) live(n uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveLocked(n)
}

func (s *callSession) liveLocked(n uint64) bool {
	_, ended := s.ended[n]
	return !s.closed && n >= s.low && !ended
}

func (s *callSession) retire(n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.liveLocked(n) {
		return
	}
	if n == s.low {
		for s.low++; ; s.low++ {
			if _, ok := s.ended[s.low]; !ok {
				break
			}
			delete(s.ended, s.low)
		}
	} else {
		s.ended[n] = struct{}{}
	}
	for w := range s.watchers[n] {
		w.cancel()
	}
	delete(s.watchers, n)
}

// watch registers w to be cancelled when call n ends; false if it has.
func (s *callSession) watch(n uint64, w *watcher) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.liveLocked(n) {
		return false
	}
	if s.watchers[n] == nil {
		s.watchers[n] = map[*watcher]struct{}{}
	}
	s.watchers[n][w] = struct{}{}
	return true
}

func (s *callSession) unwatch(n uint64, w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watchers[n], w)
	if len(s.watchers[n]) == 0 {
		delete(s.watchers, n)
	}
}

func (s *callSession) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, ws := range s.watchers {
		for w := range ws {
			w.cancel()
		}
	}
	clear(s.watchers)
}

type authedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (a *authedStream) Context() context.Context { return a.ctx }
