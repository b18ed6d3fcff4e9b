package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// burstWords are one distinct word per writer, so each writer's memories
// can be found by search.
var burstWords = []string{"amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor",
	"indigo", "juniper", "kestrel", "lagoon", "meadow", "nectar", "orchid", "pebble"}

// testConcurrentWrites: writers storing and merging at once all get their
// answers; afterwards every acknowledged write is there with its author,
// search finds each writer's memories, and the backend's own invariants
// (index against records) hold.
func testConcurrentWrites(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	const each = 12
	writers := len(burstWords)
	ids := make([][]string, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := as(fmt.Sprintf("ai:writer%d", g))
			<-start
			for i := range each {
				resp, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem(fmt.Sprintf("%s note %d", burstWords[g], i),
					fmt.Sprintf("%s written in a burst", burstWords[g]), InNS("burst"))})
				if err != nil {
					t.Errorf("writer %d store %d: %v", g, i, err)
					return
				}
				ids[g] = append(ids[g], resp.Memory.Id)
				// Every writer also stores the one shared title: merges racing each other.
				if _, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("shared", fmt.Sprintf("merged by writer %d", g), InNS("burst"))}); err != nil {
					t.Errorf("writer %d merge %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	close(start)
	testwait.Wait(t, &wg, "the writers of the burst")

	if n := stats(t, s).Total; n != uint64(writers*each+1) {
		t.Errorf("%d memories after the burst, want %d", n, writers*each+1)
	}
	for g, word := range burstWords {
		for i, id := range ids[g] {
			m := get(t, s, id)
			if m == nil || m.Title != fmt.Sprintf("%s note %d", word, i) || m.CreatedBy != fmt.Sprintf("ai:writer%d", g) {
				t.Errorf("writer %d write %d (%s) reads back as %v", g, i, id, m)
			}
		}
		if got := Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: word}); len(got) != each {
			t.Errorf("search %q finds %d memories, want %d: %v", word, len(got), each, TitlesOf(got))
		}
	}
	shared := Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "shared"})
	if len(shared) != 1 || shared[0].Memory.UpdatedBy == "" {
		t.Errorf("the shared title after racing merges: %v", shared)
	}
	check(t, s)
}

// keepPolicy refuses to delete memories titled "keep".
type keepPolicy struct{}

func (keepPolicy) CheckWrite(_ context.Context, w storage.Write) storage.Verdict {
	if w.Op == storage.OpDelete && w.Old.GetTitle() == "keep" {
		return storage.Verdict{Decision: storage.Deny, Reason: "keep is kept"}
	}
	return storage.Verdict{}
}

// testFailingWriteFailsAlone: in a burst of concurrent writes (which a
// backend may commit together), a write that fails part-way fails alone
// and leaves nothing of itself: a delete of two memories refused at the
// second keeps the first; a store refused by on_conflict writes nothing;
// every other write of the burst succeeds.
func testFailingWriteFailsAlone(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{Policy: keepPolicy{}})
	for round := range 5 {
		ns := fmt.Sprintf("round%d", round)
		victim := Store(t, s, Mem("victim", "deleted only with keep", InNS(ns)))
		keep := Store(t, s, Mem("keep", "never deleted", InNS(ns)))
		const writers = 24
		var wg sync.WaitGroup
		start := make(chan struct{})
		var delErr, conflictErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, delErr = s.DeleteMemories(Operator(), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{victim.Id, keep.Id}})
		}()
		go func() {
			defer wg.Done()
			<-start
			_, conflictErr = s.StoreMemory(Operator(), &aimemoryv1.StoreMemoryRequest{
				Memory: Mem("keep", "a second keep", InNS(ns)), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR})
		}()
		stored := make([]string, writers)
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resp, err := s.StoreMemory(Operator(), &aimemoryv1.StoreMemoryRequest{Memory: Mem(fmt.Sprintf("bystander %d", g), "stored beside failing writes", InNS(ns))})
				if err != nil {
					t.Errorf("round %d bystander %d: %v", round, g, err)
					return
				}
				stored[g] = resp.Memory.Id
			}()
		}
		close(start)
		testwait.Wait(t, &wg, "the burst")

		if !errors.Is(delErr, storage.ErrDenied) {
			t.Errorf("round %d: delete of victim and keep: %v, want denied", round, delErr)
		}
		if get(t, s, victim.Id) == nil {
			t.Errorf("round %d: the refused delete removed victim", round)
		}
		if !errors.Is(conflictErr, storage.ErrConflict) {
			t.Errorf("round %d: second keep with on_conflict ERROR: %v, want a conflict", round, conflictErr)
		}
		if got := get(t, s, keep.Id); got == nil || got.Content != "never deleted" {
			t.Errorf("round %d: keep after the burst: %v", round, got)
		}
		for g, id := range stored {
			if id != "" && get(t, s, id) == nil {
				t.Errorf("round %d: bystander %d (%s) acknowledged but missing", round, g, id)
			}
		}
		list, err := s.ListMemories(Operator(), &aimemoryv1.ListMemoriesRequest{Filter: &aimemoryv1.Filter{Namespace: ns}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Memories) != writers+2 {
			t.Errorf("round %d: %d memories in %s, want %d: %v", round, len(list.Memories), ns, writers+2, memTitles(list.Memories))
		}
	}
	check(t, s)
}
