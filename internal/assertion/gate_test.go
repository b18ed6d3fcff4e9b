package assertion

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// echoEngine answers Health with the caller the gate put into the context,
// holds WatchEvents open until its context ends, and accepts audit appends.
type echoEngine struct {
	aimemoryv1.UnimplementedEngineServer
	aimemoryv1.UnimplementedEventsServer
	aimemoryv1.UnimplementedAuditServer
	watching chan struct{}
}

func (e *echoEngine) Health(ctx context.Context, _ *aimemoryv1.HealthRequest) (*aimemoryv1.HealthResponse, error) {
	c, _ := caller.FromContext(ctx)
	return &aimemoryv1.HealthResponse{Version: c.Principal + "/" + c.Family}, nil
}

func (e *echoEngine) WatchEvents(_ *aimemoryv1.WatchEventsRequest, stream aimemoryv1.Events_WatchEventsServer) error {
	e.watching <- struct{}{}
	<-stream.Context().Done()
	return stream.Context().Err()
}

func (e *echoEngine) AppendAudit(context.Context, *aimemoryv1.AppendAuditRequest) (*aimemoryv1.AppendAuditResponse, error) {
	return &aimemoryv1.AppendAuditResponse{}, nil
}

// gated is an engine behind a Gate, and a host whose Tracker holds a
// session with it.
type gated struct {
	signer     *Signer
	gate       *Gate
	tracker    *Tracker
	engine     *echoEngine
	conn       *grpc.ClientConn
	endSession func()
}

func startGated(t testing.TB) *gated {
	t.Helper()
	signer, err := NewSigner(bytes.Repeat([]byte{7}, 32), nil)
	if err != nil {
		t.Fatal(err)
	}
	gate := NewGate(signer)
	eng := &echoEngine{watching: make(chan struct{}, 1)}
	g := grpc.NewServer(append(gate.ServerOptions(), gate.HostOnly()...)...)
	aimemoryv1.RegisterEngineServer(g, eng)
	aimemoryv1.RegisterEventsServer(g, eng)
	aimemoryv1.RegisterAuditServer(g, eng)
	aimemoryv1.RegisterCallsServer(g, gate)
	dir, err := os.MkdirTemp("", "gate") // short: a unix socket path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	lis, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	tracker := NewTracker(signer)
	ctx, cancel := context.WithCancel(context.Background())
	hostCtx := metadata.AppendToOutgoingContext(ctx, MetadataKey, string(signer.Mint(caller.Caller{Principal: "host", Family: caller.HostFamily})))
	stream, err := aimemoryv1.NewCallsClient(conn).Track(hostCtx)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan struct{})
	served := make(chan error, 1)
	go func() { served <- tracker.Serve(stream, func() { close(opened) }) }()
	var once sync.Once
	endSession := func() { once.Do(func() { cancel(); testwait.Recv(t, served, "the session to end") }) }
	t.Cleanup(endSession)
	select {
	case <-opened:
	case err := <-served:
		t.Fatalf("session: %v", err)
	case <-time.After(testwait.Deadline):
		t.Fatal("the session did not open")
	}
	return &gated{signer: signer, gate: gate, tracker: tracker, engine: eng, conn: conn, endSession: endSession}
}

// as is ctx carrying token, as a plugin's engine client sends it.
func as(token []byte) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), MetadataKey, string(token))
}

func (g *gated) health(token []byte) (string, error) {
	r, err := aimemoryv1.NewEngineClient(g.conn).Health(as(token), &aimemoryv1.HealthRequest{})
	return r.GetVersion(), err
}

func (g *gated) begin(t testing.TB, c caller.Caller) ([]byte, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	token, end, err := g.tracker.Begin(ctx, c, os.Getpid(), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return token, end
}

func refusedWith(t *testing.T, what string, err error, code codes.Code, want error) {
	t.Helper()
	if status.Code(err) != code || (want != nil && !strings.Contains(err.Error(), want.Error())) {
		t.Errorf("%s: %v, want %v (%v)", what, err, code, want)
	}
}

// A tool call's assertion is accepted while its call is in flight, and
// refused once the host reported it ended. A plugin process begins a call
// for another principal only after the engine applied that end.
func TestCallAssertionLivesOnlyDuringItsCall(t *testing.T) {
	g := startGated(t)
	alice := caller.Caller{Principal: "ai:alice", Family: "core", Scope: "team-a"}
	first, end := g.begin(t, alice)
	if who, err := g.health(first); err != nil || who != "ai:alice/core" {
		t.Fatalf("during its call: %q, %v", who, err)
	}
	end()
	bob, endBob := g.begin(t, caller.Caller{Principal: "ai:bob", Family: "core"})
	defer endBob()
	_, err := g.health(first)
	refusedWith(t, "alice's assertion during bob's call", err, codes.Unauthenticated, ErrCallEnded)
	if who, err := g.health(bob); err != nil || who != "ai:bob/core" {
		t.Fatalf("bob's own: %q, %v", who, err)
	}
	end() // a second report of the same end changes nothing
	if _, err := g.health(bob); err != nil {
		t.Fatalf("bob's after a repeated end: %v", err)
	}
}

// Calls that end out of order each end alone.
func TestCallsEndOutOfOrder(t *testing.T) {
	g := startGated(t)
	c, other := caller.Caller{Principal: "ai:a", Family: "core"}, caller.Caller{Principal: "ai:sync", Family: "core"}
	synced := func() { // a call for someone else waits until every end is applied
		_, end := g.begin(t, other)
		end()
	}
	t1, end1 := g.begin(t, c)
	t2, end2 := g.begin(t, c)
	t3, end3 := g.begin(t, c)
	end2()
	synced()
	for name, tok := range map[string][]byte{"1": t1, "3": t3} {
		if _, err := g.health(tok); err != nil {
			t.Errorf("call %s, still running: %v", name, err)
		}
	}
	_, err := g.health(t2)
	refusedWith(t, "call 2, ended", err, codes.Unauthenticated, ErrCallEnded)
	end1()
	end3()
	synced()
	for name, tok := range map[string][]byte{"1": t1, "2": t2, "3": t3} {
		_, err := g.health(tok)
		refusedWith(t, "call "+name+", ended", err, codes.Unauthenticated, ErrCallEnded)
	}
}

// Calls of one principal on one process never wait for the engine, even
// when it does not read the ends at all; a call of another principal there
// does, and one on another process does not.
func TestOnlyAnotherPrincipalWaits(t *testing.T) {
	g := startGated(t)
	alice, bob := caller.Caller{Principal: "ai:alice", Family: "core"}, caller.Caller{Principal: "ai:bob", Family: "core"}
	var session *callSession
	g.gate.mu.RLock()
	for _, s := range g.gate.sessions {
		session = s
	}
	g.gate.mu.RUnlock()
	session.mu.Lock() // the engine applies no end, and so answers no sync, while held
	_, end := g.begin(t, alice)
	end()
	_, end = g.begin(t, alice)
	end()
	begun := func(c caller.Caller, pid int) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, end, err := g.tracker.Begin(ctx, c, pid, time.Now().Add(time.Minute))
		if err == nil {
			end()
		}
		return err == nil
	}
	if !begun(alice, os.Getpid()) || !begun(bob, os.Getpid()+1) {
		t.Error("a call waited for the engine without cause")
	}
	if begun(bob, os.Getpid()) {
		t.Error("bob's call began on the process that served alice before the engine applied her ends")
	}
	session.mu.Unlock()
	if _, end := g.begin(t, bob); end == nil {
		t.Fatal("no call after the engine caught up")
	}
}

// A stream opened inside a tool call (an event watch) ends with the call.
func TestStreamEndsWithItsCall(t *testing.T) {
	g := startGated(t)
	token, end := g.begin(t, caller.Caller{Principal: "ai:a", Family: "core"})
	// The deadline fails a stream that never ends instead of hanging.
	ctx, cancel := context.WithTimeout(as(token), testwait.Deadline)
	defer cancel()
	stream, err := aimemoryv1.NewEventsClient(g.conn).WatchEvents(ctx, &aimemoryv1.WatchEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, g.engine.watching, "the watch to reach the engine")
	end()
	_, err = stream.Recv()
	if status.Code(err) != codes.Canceled {
		t.Fatalf("watch after its call ended: %v, want Canceled", err)
	}
}

// What only hosts may do, a tool call's assertion may not; an assertion
// for a family other than the host's must name a call.
func TestHostOnlyAndUnboundCalls(t *testing.T) {
	g := startGated(t)
	token, end := g.begin(t, caller.Caller{Principal: "ai:a", Family: "core"})
	defer end()
	audit := aimemoryv1.NewAuditClient(g.conn)
	_, err := audit.AppendAudit(as(token), &aimemoryv1.AppendAuditRequest{})
	refusedWith(t, "plugin AppendAudit", err, codes.PermissionDenied, nil)
	ctx, cancel := context.WithTimeout(as(token), testwait.Deadline)
	defer cancel()
	stream, err := aimemoryv1.NewCallsClient(g.conn).Track(ctx)
	if err == nil {
		_, err = stream.Recv()
	}
	refusedWith(t, "plugin Track", err, codes.PermissionDenied, nil)

	host := g.signer.Mint(caller.Caller{Principal: "host", Family: caller.HostFamily})
	if _, err := audit.AppendAudit(as(host), &aimemoryv1.AppendAuditRequest{}); err != nil {
		t.Fatalf("host AppendAudit: %v", err)
	}
	_, err = g.health(g.signer.Mint(caller.Caller{Principal: "ai:a", Family: "core"}))
	refusedWith(t, "an unbound plugin assertion", err, codes.Unauthenticated, ErrUnboundCall)
}

// When the host's session ends, every assertion of it is refused, and the
// host's next call waits for a new session.
func TestSessionEndRefusesItsCalls(t *testing.T) {
	g := startGated(t)
	token, end := g.begin(t, caller.Caller{Principal: "ai:a", Family: "core"})
	defer end()
	g.endSession()
	for deadline := time.Now().Add(10 * time.Second); ; { // the engine notices the stream's end
		g.gate.mu.RLock()
		n := len(g.gate.sessions)
		g.gate.mu.RUnlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine kept the session of a closed stream")
		}
		runtime.Gosched()
	}
	_, err := g.health(token)
	refusedWith(t, "a call of a closed session", err, codes.Unauthenticated, ErrCallEnded)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := g.tracker.Begin(ctx, caller.Caller{Principal: "ai:a", Family: "core"}, 1, time.Now().Add(time.Minute)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Begin without a session: %v, want ErrNoSession", err)
	}
}

func TestSessionWatermark(t *testing.T) {
	s := &callSession{low: 1, ended: map[uint64]struct{}{}, watchers: map[uint64]map[*watcher]struct{}{}}
	for _, n := range []uint64{3, 1, 5} {
		s.retire(n)
	}
	if s.low != 2 || len(s.ended) != 2 {
		t.Fatalf("after 3, 1, 5: low %d, ended %v", s.low, s.ended)
	}
	s.retire(2)
	if s.low != 4 || len(s.ended) != 1 {
		t.Fatalf("after 2: low %d, ended %v", s.low, s.ended)
	}
	for n, want := range map[uint64]bool{0: false, 1: false, 3: false, 4: true, 5: false, 6: true} {
		if s.live(n) != want {
			t.Errorf("live(%d) = %v, want %v", n, !want, want)
		}
	}
	s.close()
	if s.live(6) {
		t.Error("a closed session's call is live")
	}
}

// BenchmarkCallAssertion is the per-call cost of a tool call's assertion
// on both sides: Begin (sign), the engine's check of one engine call, and
// end (queued, sent on the session stream, applied by the engine).
// "one principal" is every stdio session; "principal switch" alternates two
// principals on one plugin process, so each Begin waits for a sync (a
// round trip on the in-process stream), as serve's hosts do when two
// principals' calls alternate on one plugin.
func BenchmarkCallAssertion(b *testing.B) {
	ctx := context.Background()
	callers := []caller.Caller{
		{Principal: "ai:claude-code", Session: "0f8fad5b-d9cb-469f-a165-70867728950e", Family: "core"},
		{Principal: "ai:codex", Session: "7c9e6679-7425-40de-944b-e07fc1f90ae7", Family: "core"},
	}
	for _, mode := range []string{"one principal", "principal switch"} {
		b.Run(mode, func(b *testing.B) {
			g := startGated(b)
			i := 0
			for b.Loop() {
				c := callers[0]
				if mode == "principal switch" {
					c = callers[i%2]
				}
				i++
				token, end, err := g.tracker.Begin(ctx, c, os.Getpid(), time.Now().Add(time.Minute))
				if err != nil {
					b.Fatal(err)
				}
				in := metadata.NewIncomingContext(ctx, metadata.Pairs(MetadataKey, string(token)))
				if _, _, err := g.gate.authenticate(in, aimemoryv1.Memories_GetMemories_FullMethodName); err != nil {
					b.Fatal(err)
				}
				end()
			}
		})
	}
}
