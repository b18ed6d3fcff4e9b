package storagetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// recordingPolicy denies writes touching namespace "locked", queues those
// touching "queued", and records every question it is asked.
type recordingPolicy struct {
	mu    sync.Mutex
	calls []string
	last  storage.Write
}

func (p *recordingPolicy) CheckWrite(_ context.Context, w storage.Write) storage.Verdict {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = w
	who := "nobody"
	if w.Caller != nil {
		who = w.Caller.Principal
	}
	ns := func(m *aimemoryv1.Memory) string {
		if m == nil {
			return "-"
		}
		return m.Namespace
	}
	p.calls = append(p.calls, fmt.Sprintf("%s %s %s→%s", who, w.Op, ns(w.Old), ns(w.New)))
	for _, n := range w.Namespaces() {
		switch n {
		case "locked":
			return storage.Verdict{Decision: storage.Deny, Reason: fmt.Sprintf("%s denied by governance: namespace %s is locked", w.Op, n)}
		case "queued":
			return storage.Verdict{Decision: storage.Queue, Reason: "namespace queued needs an approver"}
		}
	}
	return storage.Verdict{}
}

func (p *recordingPolicy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = nil
	return c
}

// testWritePolicy: every write path asks the policy inside its
// transaction, with the caller, the operation and the records before and
// after; a denial is ErrDenied and a queued write ErrPending, and neither
// writes anything.
func testWritePolicy(t *testing.T, o Opener) {
	p := &recordingPolicy{}
	s, _ := o.open(t, storage.Options{Policy: p})
	ctx := as("ai:alice")
	want := func(what string, calls ...string) {
		t.Helper()
		if got := p.take(); !reflect.DeepEqual(got, calls) {
			t.Errorf("%s: policy calls %q, want %q", what, got, calls)
		}
	}

	m := storeAs(t, ctx, s, Mem("a", "x", InNS("open")))
	want("store", "ai:alice store -→open")
	if p.last.New.GetCreatedBy() != "ai:alice" || p.last.New.GetId() != m.Id {
		t.Errorf("store: the policy saw %v, not the record as it is written", p.last.New)
	}
	storeAs(t, as("ai:bob"), s, Mem("a", "merged", InNS("open")))
	want("merge", "ai:bob merge open→open")
	if p.last.Old.GetContent() != "x" || p.last.New.GetContent() != "merged" || p.last.New.GetUpdatedBy() != "ai:bob" {
		t.Errorf("merge: old %v new %v", p.last.Old, p.last.New)
	}
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Content: proto.String("y")}); err != nil {
		t.Fatal(err)
	}
	want("update", "ai:alice update open→open")
	other := storeAs(t, ctx, s, Mem("b", "x", InNS("open")))
	p.take()
	if _, err := s.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: m.Id, TargetId: other.Id}); err != nil {
		t.Fatal(err)
	}
	want("link", "ai:alice link open→open")
	if p.last.Link.GetTargetId() != other.Id || p.last.Target.GetId() != other.Id {
		t.Errorf("link: the policy saw link %v target %v", p.last.Link, p.last.Target)
	}
	if _, err := s.InvalidateLink(ctx, &aimemoryv1.InvalidateLinkRequest{SourceId: m.Id, TargetId: other.Id, Relation: "related_to"}); err != nil {
		t.Fatal(err)
	}
	want("invalidate", "ai:alice link open→open")
	if _, err := s.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "E", Namespace: "open"}); err != nil {
		t.Fatal(err)
	}
	want("register", "ai:alice store -→open")
	if _, err := s.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "E", Namespace: "open", Aliases: []string{"e2"}}); err != nil {
		t.Fatal(err)
	}
	want("alias", "ai:alice alias open→open")
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{other.Id}}); err != nil {
		t.Fatal(err)
	}
	want("delete", "ai:alice delete open→-")
	// Touch and GC are not the caller's writes.
	s.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: []string{m.Id}})
	s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{})
	want("touch and gc")

	before := stats(t, s).Total
	_, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("b", "x", InNS("locked"))})
	if !errors.Is(err, storage.ErrDenied) || err.Error() != "store denied by governance: namespace locked is locked" {
		t.Errorf("store into locked: %v", err)
	}
	_, err = s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Namespace: proto.String("locked")})
	if !errors.Is(err, storage.ErrDenied) {
		t.Errorf("move into locked: %v", err)
	}
	want("denied", "ai:alice store -→locked", "ai:alice update open→locked")
	_, err = s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("q", "x", InNS("queued"))})
	var pending *storage.PendingError
	if !errors.Is(err, storage.ErrPending) || !errors.As(err, &pending) || !strings.Contains(err.Error(), "needs an approver") || errors.Is(err, storage.ErrDenied) {
		t.Errorf("store into queued: %v", err)
	}
	_, err = s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Namespace: proto.String("queued")})
	if !errors.Is(err, storage.ErrPending) {
		t.Errorf("move into queued: %v", err)
	}
	if got := get(t, s, m.Id); got.Namespace != "open" || stats(t, s).Total != before {
		t.Errorf("refused and queued writes wrote: %v, %d memories (was %d)", got, stats(t, s).Total, before)
	}
	check(t, s)
}

func testEventsAfterCommit(t *testing.T, o Opener) {
	ctx := Operator()
	var b events.Broadcaster
	sub := b.Subscribe(16)
	defer sub.Close()
	s, clk := o.open(t, storage.Options{Events: &b})
	m := Store(t, s, Mem("a", "x", meta(`{"agent_id":"alice"}`), Tier("short")))
	s.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: []string{m.Id}})
	s.UpdateMemory(as("bob"), &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Content: proto.String("y")})
	s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("a", "dup"), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR}) // fails: no event
	clk.Add(24 * time.Hour)
	s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{})
	n := Store(t, s, Mem("b", "x"))
	s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{n.Id}})
	var got []string
	for range 6 {
		select {
		case e := <-sub.C:
			got = append(got, strings.TrimSpace(e.Type+" "+e.AgentId+" "+e.Principal))
			if e.MemoryId == "" || e.Namespace != "global" || e.At == 0 {
				t.Errorf("event %v", e)
			}
		case <-time.After(time.Second):
			t.Fatalf("events so far %q", got)
		}
	}
	// agent_id is the memory's claimed provenance; the principal is who made
	// the change (bob's update of alice's memory, the operator's gc).
	want := []string{"memory_store alice operator", "memory_touch alice operator", "memory_update alice bob", "memory_gc alice operator", "memory_store  operator", "memory_delete  operator"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
