package storagetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// recordingPolicy denies writes to namespace "locked" and records calls.
type recordingPolicy struct {
	mu    sync.Mutex
	calls []string
}

func (p *recordingPolicy) CheckWrite(_ context.Context, op storage.Op, ns string, m *aimemoryv1.Memory) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, string(op)+" "+ns)
	if ns == "locked" {
		return fmt.Errorf("%s denied by governance: namespace %s is locked", op, ns)
	}
	return nil
}

func testWritePolicy(t *testing.T, o Opener) {
	ctx := context.Background()
	p := &recordingPolicy{}
	s, _ := o.open(t, storage.Options{Policy: p})
	m := store(t, s, mem("a", "x", inNS("open")))
	_, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: mem("b", "x", inNS("locked"))})
	if !errors.Is(err, storage.ErrDenied) || err.Error() != "store denied by governance: namespace locked is locked" {
		t.Errorf("store into locked: %v", err)
	}
	_, err = s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Namespace: proto.String("locked")})
	if !errors.Is(err, storage.ErrDenied) {
		t.Errorf("move into locked: %v", err)
	}
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{m.Id}}); err != nil {
		t.Fatal(err)
	}
	want := []string{"store open", "store locked", "update open", "update locked", "delete open"}
	if !reflect.DeepEqual(p.calls, want) {
		t.Errorf("policy calls %q, want %q", p.calls, want)
	}
	if st, _ := s.Stats(ctx); st.Total != 0 {
		t.Errorf("denied writes left %d memories", st.Total)
	}
	check(t, s)
}

func testEventsAfterCommit(t *testing.T, o Opener) {
	ctx := context.Background()
	var b events.Broadcaster
	sub := b.Subscribe(16)
	defer sub.Close()
	s, clk := o.open(t, storage.Options{Events: &b})
	m := store(t, s, mem("a", "x", meta(`{"agent_id":"alice"}`), tier("short")))
	s.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: []string{m.Id}})
	s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Content: proto.String("y")})
	s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: mem("a", "dup"), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR}) // fails: no event
	clk.Add(24 * time.Hour)
	s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{})
	n := store(t, s, mem("b", "x"))
	s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{n.Id}})
	var got []string
	for range 6 {
		select {
		case e := <-sub.C:
			got = append(got, e.Type+" "+e.AgentId)
			if e.MemoryId == "" || e.Namespace != "global" || e.At == 0 {
				t.Errorf("event %v", e)
			}
		case <-time.After(time.Second):
			t.Fatalf("events so far %q", got)
		}
	}
	want := []string{"memory_store alice", "memory_touch alice", "memory_update alice", "memory_gc alice", "memory_store ", "memory_delete "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
