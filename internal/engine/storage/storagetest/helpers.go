package storagetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/vecset"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Clock is a settable time source for expiry and recency tests; backends'
// own tests use it too.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at a fixed instant.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

// Now is the clock's time (storage.Options.Now).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// open opens a fresh backend with a test clock (unless opts has one).
func (o Opener) open(t *testing.T, opts storage.Options) (storage.Backend, *Clock) {
	t.Helper()
	c := NewClock()
	if opts.Now == nil {
		opts.Now = c.Now
	}
	return o(t, opts), c
}

// check fails t unless the backend's own invariants hold (Checker).
func check(t *testing.T, s storage.Backend) {
	t.Helper()
	c, ok := storage.As[Checker](s)
	if !ok {
		t.Fatalf("%T does not implement storagetest.Checker", s)
	}
	if err := c.CheckConsistency(Operator()); err != nil {
		t.Error(err)
	}
}

// stats reads the backend's counts.
func stats(t testing.TB, s storage.Backend) *aimemoryv1.StatsResponse {
	t.Helper()
	st, err := s.Stats(Operator())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Mem is a memory to store (confidence 1), changed by mod: the suite's
// helpers below are shared with backends' own tests.
func Mem(title, content string, mod ...func(*aimemoryv1.Memory)) *aimemoryv1.Memory {
	m := &aimemoryv1.Memory{Title: title, Content: content, Confidence: 1}
	for _, f := range mod {
		f(m)
	}
	return m
}

// InNS, Tier and Tags set a field of a Mem.
func InNS(ns string) func(*aimemoryv1.Memory) { return func(m *aimemoryv1.Memory) { m.Namespace = ns } }
func Tier(t string) func(*aimemoryv1.Memory)  { return func(m *aimemoryv1.Memory) { m.Tier = t } }
func prio(p int32) func(*aimemoryv1.Memory)   { return func(m *aimemoryv1.Memory) { m.Priority = p } }
func Tags(ts ...string) func(*aimemoryv1.Memory) {
	return func(m *aimemoryv1.Memory) { m.Tags = ts }
}
func meta(j string) func(*aimemoryv1.Memory) {
	return func(m *aimemoryv1.Memory) { m.MetadataJson = []byte(j) }
}

// Storer is the part of a Backend, or of a backend below the seam
// (seam.Native), that Store needs.
type Storer interface {
	StoreMemory(context.Context, *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error)
}

// Store stores m and fails the test on an error.
func Store(t testing.TB, s Storer, m *aimemoryv1.Memory) *aimemoryv1.Memory {
	t.Helper()
	resp, err := s.StoreMemory(Operator(), &aimemoryv1.StoreMemoryRequest{Memory: m})
	if err != nil {
		t.Fatalf("store %q: %v", m.GetTitle(), err)
	}
	return resp.Memory
}

func get(t testing.TB, s storage.Backend, id string) *aimemoryv1.Memory {
	t.Helper()
	resp, err := s.GetMemories(Operator(), &aimemoryv1.GetMemoriesRequest{Ids: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Memories) != 1 {
		return nil
	}
	return resp.Memories[0]
}

// Search runs req (limit 100 unless set) and fails the test on an error.
func Search(t testing.TB, s interface {
	SearchMemories(context.Context, *aimemoryv1.SearchMemoriesRequest, *storage.Hybrid) (*aimemoryv1.SearchMemoriesResponse, error)
}, req *aimemoryv1.SearchMemoriesRequest) []*aimemoryv1.ScoredMemory {
	t.Helper()
	if req.Limit == 0 {
		req.Limit = 100
	}
	resp, err := s.SearchMemories(Operator(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Results
}

// TitlesOf lists the results' titles in order.
func TitlesOf(results []*aimemoryv1.ScoredMemory) []string {
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.Memory.Title
	}
	return out
}

func memTitles(ms []*aimemoryv1.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Title
	}
	return out
}

// as is a context carrying principal as the verified caller, as the
// engine's transport puts it there, granted every namespace (as a stdio
// session is).
func as(principal string) context.Context {
	return caller.NewContext(context.Background(), caller.Caller{Principal: principal, Session: "s-" + principal, Family: "core", Scope: caller.AllNamespaces})
}

// OperatorCaller is the caller of tests that call a backend for no one in
// particular: an operator with the explicit grant of every namespace (the
// engine grants nothing to a context without a caller).
var OperatorCaller = caller.Caller{Principal: "operator", Session: "test", Family: caller.HostFamily, Scope: caller.AllNamespaces}

// Operator is a context carrying OperatorCaller.
func Operator() context.Context { return AsOperator(context.Background()) }

// OperatorAs is Operator with another principal: who a link or alias
// records as its author is the verified caller.
func OperatorAs(principal string) context.Context {
	c := OperatorCaller
	c.Principal = principal
	return caller.NewContext(context.Background(), c)
}

// AsOperator is ctx carrying OperatorCaller.
func AsOperator(ctx context.Context) context.Context { return caller.NewContext(ctx, OperatorCaller) }

// noCaller is a context with no verified caller: it reads nothing and
// writes nothing.
var noCaller = context.Background()

func storeAs(t testing.TB, ctx context.Context, s storage.Backend, m *aimemoryv1.Memory) *aimemoryv1.Memory {
	t.Helper()
	resp, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m})
	if err != nil {
		t.Fatalf("store %q: %v", m.GetTitle(), err)
	}
	return resp.Memory
}

func getAs(t testing.TB, ctx context.Context, s storage.Backend, ids ...string) *aimemoryv1.GetMemoriesResponse {
	t.Helper()
	resp, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: ids})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// StoreWithVectors stores a memory titled by each key of vecs (namespace
// "n") with that vector by model "m"; it returns their ids by title.
func StoreWithVectors(t testing.TB, s interface {
	Storer
	storage.Vectors
}, vecs map[string][]float32) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for title, v := range vecs {
		m := Store(t, s, Mem(title, title+" text", InNS("n")))
		ids[title] = m.GetId()
		if _, err := s.PutVectors(context.Background(), "m", []storage.VectorPut{{ID: m.GetId(), Text: vecset.EmbedText(m), Vector: v}}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}
