package server

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type denyNS string

// CheckWrite denies writes into namespace d and queues those into d+"-q".
func (d denyNS) CheckWrite(_ context.Context, w storage.Write) storage.Verdict {
	switch w.New.GetNamespace() {
	case string(d):
		return storage.Verdict{Decision: storage.Deny, Reason: fmt.Sprintf("%s denied by governance", w.Op)}
	case string(d) + "-q":
		return storage.Verdict{Decision: storage.Queue, Reason: "needs approval"}
	}
	return storage.Verdict{}
}

// serve runs the services of cfg on an in-memory listener and returns a client.
func serve(t testing.TB, cfg Config) *wire.EngineConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	// Calls arrive as from a host, as the engine's assertion check would
	// have verified them (that check is tested in package assertion).
	asHost := grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(withTestCaller(ctx), req)
	})
	asHostStream := grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		return h(srv, &callerStream{ServerStream: ss, ctx: withTestCaller(ss.Context())})
	})
	g := grpc.NewServer(append(append(Recover(nil), asHost, asHostStream), Authorize()...)...)
	Register(g, cfg)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return wire.NewEngineConn(conn)
}

// testCallerKey is metadata naming the caller a test call is made for
// (principal, family, scope, space separated); "none" makes one without
// a caller. Without it a call is a host's with every namespace.
const testCallerKey = "test-caller"

func withTestCaller(ctx context.Context) context.Context {
	c := caller.Caller{Principal: "test", Family: caller.HostFamily, Scope: caller.AllNamespaces}
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get(testCallerKey)) == 1 {
		v := md.Get(testCallerKey)[0]
		if v == "none" {
			return ctx
		}
		f := strings.SplitN(v, " ", 3)
		c = caller.Caller{Principal: f[0], Family: f[1]}
		if len(f) == 3 {
			c.Scope = f[2]
		}
	}
	return caller.NewContext(ctx, c)
}

// callAs is ctx making its calls for principal of family with scope.
func callAs(ctx context.Context, principal, family, scope string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, testCallerKey, principal+" "+family+" "+scope)
}

// callerStream is a server stream whose context carries a caller.
type callerStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (c *callerStream) Context() context.Context { return c.ctx }

// waitForWatcher waits, for at most 10s, until a watch stream has
// subscribed to ev: only writes after that reach it.
func waitForWatcher(t testing.TB, ev *events.Broadcaster) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ev.Subscribers() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watch stream never subscribed")
		}
	}
}

func newServer(t testing.TB) (*wire.EngineConn, *events.Broadcaster) {
	t.Helper()
	c, ev, _ := newServerOf(t)
	return c, ev
}

// newServerOf is newServer with the store it serves.
func newServerOf(t testing.TB) (*wire.EngineConn, *events.Broadcaster, *records.Store) {
	t.Helper()
	ev := &events.Broadcaster{}
	bst, err := boltstore.Open(storagetest.Operator(), filepath.Join(t.TempDir(), "memory.db"), storage.Options{Events: ev, Policy: denyNS("locked")})
	if err != nil {
		t.Fatal(err)
	}
	st := records.New(bst) // served as the engine serves it
	t.Cleanup(func() { st.Close() })
	return serve(t, Config{Backend: st, Events: ev, Version: "test", DataDir: "/data"}), ev, st
}

func TestStatusCodes(t *testing.T) {
	ctx := storagetest.Operator()
	c, _ := newServer(t)
	m := func(title string) *aimemoryv1.Memory {
		return &aimemoryv1.Memory{Title: title, Content: "x", Confidence: 1}
	}
	a, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m("a")})
	if err != nil {
		t.Fatal(err)
	}
	// Enough memories that some share a one-character id prefix.
	for i := range 20 {
		c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m(fmt.Sprint("n", i))})
	}
	tests := []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"field rule", func() error {
			_, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "x", Priority: 42}})
			return err
		}, codes.InvalidArgument, "priority: must be an integer from 1 to 10 (got 42)"},
		{"missing memory", func() error { _, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{}); return err },
			codes.InvalidArgument, "memory: is required"},
		{"not found", func() error {
			_, err := c.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: "nope", Content: proto.String("y")})
			return err
		}, codes.NotFound, "memory not found: nope"},
		{"conflict", func() error {
			_, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m("a"), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR})
			return err
		}, codes.AlreadyExists, "CONFLICT: memory with title 'a' already exists in namespace 'global' (existing id: " + a.Memory.Id + ")"},
		{"ambiguous", func() error {
			var err error
			for _, p := range "0123456789abcdef" {
				if _, err = c.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{string(p)}, AllowPrefix: true}); err != nil {
					return err
				}
			}
			return err
		}, codes.FailedPrecondition, "ambiguous ID prefix"},
		{"denied", func() error {
			mm := m("b")
			mm.Namespace = "locked"
			_, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: mm})
			return err
		}, codes.PermissionDenied, "store denied by governance"},
		{"queued", func() error {
			mm := m("q")
			mm.Namespace = "locked-q"
			_, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: mm})
			return err
		}, codes.Aborted, "store queued for approval as pending action "},
		{"guarded", func() error {
			mm := m("g")
			mm.Namespace = "_agents"
			_, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: mm})
			return err
		}, codes.PermissionDenied, "namespace: '_agents' is guarded"},
	}
	for _, tc := range tests {
		err := tc.call()
		if s, _ := status.FromError(err); s.Code() != tc.code || !strings.HasPrefix(s.Message(), tc.msg) {
			t.Errorf("%s: %v, want %v %q", tc.name, err, tc.code, tc.msg)
		}
	}
	h, err := c.Health(ctx, &aimemoryv1.HealthRequest{})
	if err != nil || h.MemoryCount != 21 || h.SchemaVersion != boltstore.SchemaVersion || h.Version != "test" || h.Pid == 0 {
		t.Errorf("health = %v, %v", h, err)
	}
}

func TestPanicIsInternal(t *testing.T) {
	c := serve(t, Config{Version: "test"}) // no backend: every call panics
	_, err := c.ListMemories(storagetest.Operator(), &aimemoryv1.ListMemoriesRequest{Limit: 1})
	if status.Code(err) != codes.Internal {
		t.Errorf("panic surfaced as %v", err)
	}
	if _, err := c.Health(storagetest.Operator(), &aimemoryv1.HealthRequest{}); status.Code(err) != codes.Internal {
		t.Errorf("second call: %v", err)
	}
}

func TestWatchEvents(t *testing.T) {
	c, ev := newServer(t)
	ctx, cancel := context.WithTimeout(storagetest.Operator(), 5*time.Second)
	defer cancel()
	stream, err := c.WatchEvents(ctx, &aimemoryv1.WatchEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitForWatcher(t, ev) // events are for writes after the subscription
	r, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := stream.Recv()
	if err != nil || e.Type != "memory_store" || e.MemoryId != r.Memory.Id {
		t.Errorf("event = %v, %v", e, err)
	}
}

// The event stream fails closed: a caller with no scope is sent nothing,
// replayed or live, but its own inbox's events; no family's keyspace but
// its own, no other inbox. A call with no caller is refused.
func TestWatchEventsFailsClosed(t *testing.T) {
	c, _ := newServer(t)
	ctx, cancel := context.WithTimeout(storagetest.Operator(), 10*time.Second)
	defer cancel()
	if _, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "team note", Content: "x", Namespace: "team-a"}}); err != nil {
		t.Fatal(err)
	}
	notes := callAs(ctx, "ai:notes-user", "notes", caller.AllNamespaces)
	if _, err := c.StoreMemory(notes, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "notes state", Content: "x", Namespace: "_family/notes"}}); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"ai:other", "ai:probe"} {
		if _, err := c.SendMessage(ctx, &aimemoryv1.SendMessageRequest{To: to, Title: "for " + to, Payload: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	stream := func(ctx context.Context) (aimemoryv1.Events_WatchEventsClient, error) {
		return c.WatchEvents(ctx, &aimemoryv1.WatchEventsRequest{Resume: true})
	}
	first := func(ctx context.Context) (*aimemoryv1.Event, error) {
		s, err := stream(ctx)
		if err != nil {
			return nil, err
		}
		return s.Recv()
	}
	// The first event an unscoped plugin caller sees is its own inbox's,
	// the last written: all before it were withheld.
	if e, err := first(callAs(ctx, "ai:probe", "probe", "")); err != nil || e.GetNamespace() != "_messages/ai:probe" {
		t.Errorf("an unscoped caller's first event: %v, %v", e, err)
	}
	// The notes family sees its keyspace, never another's inbox.
	s, err := stream(callAs(ctx, "ai:probe", "notes", caller.AllNamespaces))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"team note", "notes state", "for ai:probe"} {
		if e, err := s.Recv(); err != nil || e.GetTitle() != want {
			t.Errorf("the notes family's events: %v, %v; want %q", e, err, want)
		}
	}
	if _, err := first(metadata.AppendToOutgoingContext(ctx, testCallerKey, "none")); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a stream without a caller: %v", err)
	}
	if _, err := c.Stats(metadata.AppendToOutgoingContext(ctx, testCallerKey, "none"), &aimemoryv1.StatsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a call without a caller: %v", err)
	}
}

// A liveness-only stream (the host's keeper) carries no events: a store
// another watcher sees sends it nothing, and it ends when its client goes.
func TestWatchEventsLivenessOnly(t *testing.T) {
	c, ev := newServer(t)
	ctx, cancel := context.WithTimeout(storagetest.Operator(), 5*time.Second)
	defer cancel()
	lctx, lcancel := context.WithCancel(ctx)
	live, err := c.WatchEvents(lctx, &aimemoryv1.WatchEventsRequest{LivenessOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := c.WatchEvents(ctx, &aimemoryv1.WatchEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitForWatcher(t, ev)
	if _, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "x"}}); err != nil {
		t.Fatal(err)
	}
	if e, err := watcher.Recv(); err != nil || e.Type != "memory_store" {
		t.Fatalf("watcher: %v, %v", e, err)
	}
	if n := ev.Subscribers(); n != 1 {
		t.Errorf("subscribers = %d, want 1 (the liveness stream subscribes to nothing)", n)
	}
	lcancel()
	if e, err := live.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("liveness stream: %v, %v; want no event, then canceled", e, err)
	}
}

// FuzzStoreRequest decodes arbitrary bytes as a store request: the engine
// must answer every one with a result or a client error, never Internal.
func FuzzStoreRequest(f *testing.F) {
	seed, _ := proto.Marshal(&aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "c", Tags: []string{"x"}, MetadataJson: []byte(`{"scope":"team"}`)}})
	f.Add(seed)
	f.Add([]byte{})
	ev := &events.Broadcaster{}
	bst, err := boltstore.Open(storagetest.Operator(), filepath.Join(f.TempDir(), "memory.db"), storage.Options{Events: ev})
	if err != nil {
		f.Fatal(err)
	}
	st := records.New(bst) // served as the engine serves it
	f.Cleanup(func() { st.Close() })
	srv := &Memories{st: st, errorMapper: errorMapper{log: slog.New(slog.DiscardHandler)}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req := &aimemoryv1.StoreMemoryRequest{}
		if proto.Unmarshal(raw, req) != nil {
			return
		}
		resp, err := srv.StoreMemory(storagetest.Operator(), req)
		if code := status.Code(err); code == codes.Internal || code == codes.Unknown {
			t.Fatalf("store %v: %v", req, err)
		}
		if err == nil {
			q := &aimemoryv1.SearchMemoriesRequest{Query: resp.Memory.Title, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Limit: 5}
			if _, err := srv.SearchMemories(storagetest.Operator(), q); err != nil {
				t.Fatalf("search %q: %v", q.Query, err)
			}
		}
	})
}

// A listing that asks for short ids gets them with its memories, one per
// memory in order, as ShortIds would answer.
func TestShortIDsRideAlong(t *testing.T) {
	c, _ := newServer(t)
	ctx := storagetest.Operator()
	for _, title := range []string{"alpha note", "beta note", "gamma note"} {
		if _, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "a note", Tier: "long", Confidence: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10, ShortIdLength: 8})
	if err != nil {
		t.Fatal(err)
	}
	search, err := c.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "note", Limit: 10, ShortIdLength: 8})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.GetMemories() {
		ids = append(ids, m.GetId())
	}
	want, err := c.ShortIds(ctx, &aimemoryv1.ShortIdsRequest{Ids: ids, MinLength: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 || !slices.Equal(list.GetShortIds(), want.GetPrefixes()) {
		t.Fatalf("list short ids %q, want %q", list.GetShortIds(), want.GetPrefixes())
	}
	for i, r := range search.GetResults() {
		if s := search.GetShortIds()[i]; len(s) < 8 || !strings.HasPrefix(r.GetMemory().GetId(), s) {
			t.Errorf("search result %d: short id %q of %s", i, s, r.GetMemory().GetId())
		}
	}
	plain, err := c.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10})
	if err != nil || len(plain.GetShortIds()) != 0 {
		t.Fatalf("not asked for: %q %v", plain.GetShortIds(), err)
	}
}

// A plugin built before query_vector, vector_model, min_similarity and
// query_unread were reserved may still send them (fields 8 to 11): they
// are skipped, so its vector cannot steer the ranking; the engine, which
// has no embedder here, searches by keyword.
func TestSearchSkipsTheReservedVectorFields(t *testing.T) {
	c, _, st := newServerOf(t)
	ctx := storagetest.Operator()
	m, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "alpha", Content: "a note", Tier: "long", Confidence: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.PutVectors(ctx, "m", []storage.VectorPut{{ID: m.GetMemory().GetId(), Text: "alpha a note", Vector: []float32{1, 0}}}); n != 1 || err != nil {
		t.Fatalf("put vector: %d, %v", n, err)
	}
	req := &aimemoryv1.SearchMemoriesRequest{Query: "note", Limit: 10}
	// The vector and model the storage would blend with, were they taken.
	if r, err := st.SearchMemories(ctx, req, &storage.Hybrid{Vector: []float32{1, 0}, Model: "m", MinSimilarity: -1}); err != nil || r.GetMode() != "hybrid" {
		t.Fatalf("the storage given the vector: %v, %v; want hybrid", r, err)
	}
	old := protowire.AppendTag(nil, 8, protowire.BytesType)
	old = protowire.AppendBytes(old, protowire.AppendFixed32(protowire.AppendFixed32(nil, math.Float32bits(1)), 0))
	old = protowire.AppendString(protowire.AppendTag(old, 9, protowire.BytesType), "m")
	old = protowire.AppendFixed32(protowire.AppendTag(old, 10, protowire.Fixed32Type), math.Float32bits(-1))
	old = protowire.AppendFixed32(protowire.AppendTag(old, 11, protowire.Fixed32Type), 0)
	req.ProtoReflect().SetUnknown(old)
	r, err := c.SearchMemories(ctx, req)
	if err != nil || r.GetMode() != "keyword" || len(r.GetResults()) != 1 {
		t.Fatalf("search with the reserved fields: %v, %v; want keyword, 1 result", r, err)
	}
}
