package pgstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// leadResult is one engine's Lead answer.
type leadResult struct {
	who     int
	lost    <-chan struct{}
	release func()
	err     error
}

// Two engines ask to lead one task: exactly one does, and keeps it while
// the other waits; when the leader's connection is killed, the leader is
// told it lost it and the other takes over. Another task is led
// independently.
func TestExactlyOneLeaderAndTakeover(t *testing.T) {
	defer func(p, c time.Duration) { leaderPoll, leaderCheck = p, c }(leaderPoll, leaderCheck)
	leaderPoll, leaderCheck = 20*time.Millisecond, 50*time.Millisecond
	dsn := pgtest.DSN(t)
	var s [2]*Store
	for i := range s {
		st, err := Open(storagetest.Operator(), dsn, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s[i] = st
	}
	ctx, cancel := context.WithCancel(storagetest.Operator())
	defer cancel()
	results := make(chan leadResult, 2)
	for i := range s {
		go func() {
			lost, release, err := s[i].Lead(ctx, storage.TaskWebhooks)
			results <- leadResult{i, lost, release, err}
		}()
	}
	first := testwait.Recv(t, results, "a first engine to lead")
	if first.err != nil {
		t.Fatal(first.err)
	}
	pid, err := s[0].LeaderSession(ctx, storage.TaskWebhooks)
	if err != nil || pid == 0 {
		t.Fatalf("leader session: %d %v", pid, err)
	}
	// The follower keeps polling: it has not led while the leader holds it
	// (many of its polls have passed by the time a second task is led).
	other, releaseOther, err := s[1-first.who].Lead(ctx, storage.TaskPruneChanges)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseOther()
	select {
	case r := <-results:
		t.Fatalf("engine %d leads too", r.who)
	case <-other:
		t.Fatal("an unrelated leadership was lost")
	case <-time.After(10 * leaderPoll):
	}

	// Kill the leader's session, as a dead engine's would end.
	if _, err := s[0].pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the leader was not told its connection died")
	}
	var second leadResult
	select {
	case second = <-results:
	case <-time.After(10 * time.Second):
		t.Fatal("no engine took over")
	}
	if second.err != nil || second.who == first.who {
		t.Fatalf("takeover by %d (leader was %d): %v", second.who, first.who, second.err)
	}
	first.release()
	second.release()
	if pid, err := s[0].LeaderSession(ctx, storage.TaskWebhooks); err != nil || pid != 0 {
		t.Fatalf("after release the lock is held by %d (%v)", pid, err)
	}
}

// A Lead waiting for the lock gives up when its context ends.
func TestLeadWaitEndsWithContext(t *testing.T) {
	defer func(p time.Duration) { leaderPoll = p }(leaderPoll)
	leaderPoll = 20 * time.Millisecond
	s := open(t, storage.Options{})
	_, release, err := s.Lead(storagetest.Operator(), storage.TaskGC)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(storagetest.Operator(), 200*time.Millisecond)
	defer cancel()
	if _, _, err := s.Lead(ctx, storage.TaskGC); err != context.DeadlineExceeded {
		t.Fatalf("second Lead of a held task: %v, want the context's end", err)
	}
}

// Pruning the change log past an engine's position makes that engine
// reload its index instead of missing the pruned changes; an engine that
// was up to date just goes on.
func TestPrunedChangeLogReloads(t *testing.T) {
	dsn := pgtest.DSN(t)
	clk := storagetest.NewClock()
	writer, err := Open(storagetest.Operator(), dsn, storage.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	idle, err := Open(storagetest.Operator(), dsn, storage.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	ctx := storagetest.Operator()
	for _, title := range []string{"zebra one", "zebra two", "zebra three"} {
		if _, err := records.New(writer).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem(title, "striped "+title)}); err != nil {
			t.Fatal(err)
		}
	}
	// Everything so far is "old" and pruned; idle never caught up.
	if _, err := writer.pool.Exec(ctx, `UPDATE changes SET at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	n, err := writer.PruneChanges(ctx, time.Hour)
	if err != nil || n != 3 {
		t.Fatalf("pruned %d rows (%v), want 3", n, err)
	}
	if n, err := writer.PruneChanges(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("second prune: %d rows (%v), want 0", n, err)
	}
	// Readers at once: one of them reloads, none sees a half-replaced index.
	var wg sync.WaitGroup
	for _, s := range []*Store{idle, idle, idle, writer} {
		wg.Go(func() {
			resp, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "zebra", Limit: 10}, nil)
			if err != nil {
				t.Error(err)
			} else if len(resp.GetResults()) != 3 {
				t.Errorf("%d results after the prune, want 3", len(resp.GetResults()))
			}
		})
	}
	testwait.Wait(t, &wg, "the readers after the prune")
	// New writes after a reload are still seen (its position is the horizon or later).
	if _, err := records.New(writer).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("zebra four", "striped four")}); err != nil {
		t.Fatal(err)
	}
	resp, err := idle.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "zebra", Limit: 10}, nil)
	if err != nil || len(resp.GetResults()) != 4 {
		t.Fatalf("after a later write: %d results (%v), want 4", len(resp.GetResults()), err)
	}
	// A fresh engine opens on a pruned log.
	fresh, err := Open(ctx, dsn, storage.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if fresh.Count() != 4 {
		t.Fatalf("fresh engine sees %d memories, want 4", fresh.Count())
	}
}
