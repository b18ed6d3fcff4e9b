package boltstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// trapPolicy panics on a store titled "boom" and refuses deletes of
// memories titled "keep".
type trapPolicy struct{}

func (trapPolicy) CheckWrite(_ context.Context, w storage.Write) storage.Verdict {
	if w.Op == storage.OpStore && w.New.GetTitle() == "boom" {
		panic("policy trap")
	}
	if w.Op == storage.OpDelete && w.Old.GetTitle() == "keep" {
		return storage.Verdict{Decision: storage.Deny, Reason: "keep is kept"}
	}
	return storage.Verdict{}
}

// eventLog records published events in order.
type eventLog struct {
	mu  sync.Mutex
	ids []string
}

func (l *eventLog) Publish(e *aimemoryv1.Event) {
	l.mu.Lock()
	l.ids = append(l.ids, e.MemoryId)
	l.mu.Unlock()
}

// waitQueue waits until the leader has taken its batch and n writes wait
// behind it.
func waitQueue(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.queueMu.Lock()
		queued, leading := len(s.queue), s.leading
		s.queueMu.Unlock()
		if leading && queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued (leading %v), want %d", queued, leading, n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestGroupCommit holds a commit under way while writes queue behind it;
// the next commit takes them all in one transaction. A write that panics,
// one refused part-way (after it deleted a memory in the shared
// transaction) and one whose caller gave up while queued each fail alone
// and leave nothing behind; the others commit, their events follow in
// commit order, and the index agrees with the records.
func TestGroupCommit(t *testing.T) {
	ev := &eventLog{}
	s, _ := openTest(t, Options{Policy: trapPolicy{}, Events: ev})
	victim := storagetest.Store(t, records.New(s), storagetest.Mem("victim", "deleted only with keep"))
	keep := storagetest.Store(t, records.New(s), storagetest.Mem("keep", "never deleted"))
	ev.ids = nil

	s.writeMu.Lock() // the commit under way
	ctx := storagetest.Operator()
	var wg sync.WaitGroup
	storeAsync := func(ctx context.Context, title string, out *error, id *string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem(title, "written in a group")})
			*out = err
			if err == nil {
				*id = resp.Memory.Id
			}
		}()
	}
	var leadErr error
	var leadID string
	storeAsync(ctx, "leader", &leadErr, &leadID)
	waitQueue(t, s, 0)

	const good = 20
	goodErrs, goodIDs := make([]error, good), make([]string, good)
	var boomErr, gaveUpErr, delErr error
	var unused string
	gaveUp, cancel := context.WithCancel(ctx)
	queued := 0
	next := func() { queued++; waitQueue(t, s, queued) } // one at a time, so the queue's order is known
	for i := range good {
		storeAsync(ctx, fmt.Sprintf("good %d", i), &goodErrs[i], &goodIDs[i])
		next()
		switch i {
		case 5:
			storeAsync(ctx, "boom", &boomErr, &unused)
			next()
		case 10:
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, delErr = records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{victim.Id, keep.Id}})
			}()
			next()
		case 15:
			storeAsync(gaveUp, "gave up", &gaveUpErr, &unused)
			next()
		}
	}
	cancel()
	s.writeMu.Unlock()
	testwait.Wait(t, &wg, "the queued writes")

	if leadErr != nil {
		t.Fatalf("leader: %v", leadErr)
	}
	for i, err := range goodErrs {
		if err != nil {
			t.Errorf("good %d: %v", i, err)
		}
	}
	if boomErr == nil || boomErr.Error() != "internal error in a write" {
		t.Errorf("the panicking store: %v", boomErr)
	}
	if !errors.Is(delErr, storage.ErrDenied) {
		t.Errorf("the refused delete: %v", delErr)
	}
	if !errors.Is(gaveUpErr, context.Canceled) {
		t.Errorf("the store whose caller gave up: %v", gaveUpErr)
	}
	if s.largestBatch != good {
		t.Errorf("largest commit took %d writes, want the %d that succeeded behind the leader", s.largestBatch, good)
	}
	if get := getIDs(t, s, victim.Id, keep.Id); len(get) != 2 {
		t.Errorf("after the refused delete %d of victim and keep remain", len(get))
	}
	want := append([]string{leadID}, goodIDs...)
	if !slices.Equal(ev.ids, want) {
		t.Errorf("events %v\nwant the commit order %v", ev.ids, want)
	}
	if n := s.Count(); n != good+3 {
		t.Errorf("%d memories, want %d", n, good+3)
	}
	for _, title := range []string{"boom", "gave up"} {
		if hits := storagetest.Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: title}); len(hits) != 0 {
			t.Errorf("the failed store %q was written: %v", title, storagetest.TitlesOf(hits))
		}
	}
	if err := s.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}

func getIDs(t *testing.T, s *Store, ids ...string) []*aimemoryv1.Memory {
	t.Helper()
	resp, err := records.New(s).GetMemories(storagetest.Operator(), &aimemoryv1.GetMemoriesRequest{Ids: ids})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Memories
}

// panicPublisher panics on the events of namespace "bug".
type panicPublisher struct{}

func (panicPublisher) Publish(e *aimemoryv1.Event) {
	if e.Namespace == "bug" {
		panic("publisher bug")
	}
}

// TestGroupCommitSurvivesABug: a panic outside the writes' functions (here
// in event publishing, after the commit) reaches the leader's caller, fails
// the rest of its batch with an error rather than an acknowledgement, and
// leaves the store writable.
func TestGroupCommitSurvivesABug(t *testing.T) {
	s, _ := openTest(t, Options{Events: panicPublisher{}})
	ctx := storagetest.Operator()
	var wg sync.WaitGroup
	errs, panics := make([]error, 3), make([]any, 3)
	storeAsync := func(i int, ns string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { panics[i] = recover() }()
			_, errs[i] = records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem(fmt.Sprintf("write %d", i), "x", storagetest.InNS(ns))})
		}()
	}
	s.writeMu.Lock()
	storeAsync(0, "first") // commits alone, then hands the lead to the bug
	waitQueue(t, s, 0)
	storeAsync(1, "bug") // leads the second batch: its panic reaches its caller
	waitQueue(t, s, 1)
	storeAsync(2, "fine") // shares the second batch
	waitQueue(t, s, 2)
	s.writeMu.Unlock()
	testwait.Wait(t, &wg, "the three writes")

	if errs[0] != nil || panics[0] != nil {
		t.Errorf("the first batch: %v, %v", errs[0], panics[0])
	}
	if panics[1] != "publisher bug" {
		t.Errorf("the bug's leader: panic %v, error %v", panics[1], errs[1])
	}
	if errs[2] == nil || errs[2].Error() != "internal error in a group commit" || panics[2] != nil {
		t.Errorf("the write sharing the bug's batch: %v, %v", errs[2], panics[2])
	}
	storagetest.Store(t, records.New(s), storagetest.Mem("after", "the store still takes writes"))
}

// TestImportedSubscriptionStartsAfterItsOwnWrite: an import that shares a
// group commit with other writes gives the subscription it creates the
// events after its own: none for a write before it in the batch or for
// the import's own memory, one for the write after it.
func TestImportedSubscriptionStartsAfterItsOwnWrite(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := storagetest.Operator()
	s.writeMu.Lock() // the commit under way
	var wg sync.WaitGroup
	errs := make([]error, 4)
	store := func(i int, title string) {
		wg.Go(func() {
			_, errs[i] = records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem(title, "in a group")})
		})
	}
	store(0, "leader")
	waitQueue(t, s, 0)
	store(1, "before")
	waitQueue(t, s, 1)
	var res []*aimemoryv1.ImportResult
	wg.Go(func() {
		res, errs[2] = records.New(s).Import(ctx, []*aimemoryv1.ExportRecord{
			importedMemory("own", "the import's own"),
			{Record: &aimemoryv1.ExportRecord_Subscription{Subscription: &aimemoryv1.WebhookSubscription{
				Id: "0b6f1c2e-0000-4000-8000-00000000000a", Url: "https://hooks.example/x", Events: []string{"*"}, CreatedBy: "ai:alice", CreatedAt: 5, Scope: "*"}}},
		})
	})
	waitQueue(t, s, 2)
	store(3, "after")
	waitQueue(t, s, 3)
	s.writeMu.Unlock()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if len(res) != 2 || res[0].GetOutcome() != "created" || res[1].GetOutcome() != "created" {
		t.Fatalf("import: %v", res)
	}
	if s.largestBatch != 3 {
		t.Fatalf("largest batch %d, want the 3 writes queued behind the leader", s.largestBatch)
	}
	due, _, err := s.DueDeliveries(ctx, 1<<62, 10, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range due {
		got = append(got, d.Event.GetTitle())
	}
	if strings.Join(got, ",") != "after" {
		t.Fatalf("deliveries %q, want only the write after the import", got)
	}
	subs, err := s.ListSubscriptions(ctx)
	if err != nil || len(subs) != 1 || subs[0].FromSeq != 3 {
		t.Fatalf("subscriptions %+v, %v: want one starting after seq 3 (leader, before, own)", subs, err)
	}
}
