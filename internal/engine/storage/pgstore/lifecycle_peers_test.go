package pgstore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestForgetAcrossEngines: one engine stores memories while the other
// forgets them by pattern, at once. Forget matches in the database inside
// its own transaction, not in its engine's index (which lags the other
// engine's commits), so every memory is forgotten exactly once: the
// matches of all forgets add up to the writes, none is left live, and
// every one is archived with reason forget.
func TestForgetAcrossEngines(t *testing.T) {
	dsn := pgtest.DSN(t)
	var engines [2]*Store
	for i := range engines {
		s, err := Open(storagetest.Operator(), dsn, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		engines[i] = s
	}
	const writes = 150
	ctx := storagetest.Operator()
	var (
		matched atomic.Int64
		done    = make(chan struct{})
		wg      sync.WaitGroup
	)
	forget := func() {
		resp, err := records.New(engines[1]).Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft", Namespace: "race"})
		if err != nil {
			t.Error(err)
			return
		}
		matched.Add(int64(resp.Matched))
	}
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				forget()
			}
		}
	})
	for i := range writes {
		_, err := records.New(engines[0]).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
			Title: fmt.Sprintf("draft %d", i), Content: "to be forgotten", Namespace: "race", Confidence: 1}})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	testwait.Wait(t, &wg, "the forgetting peer to stop")
	forget() // whatever the last concurrent forget did not see yet
	if got := matched.Load(); got != writes {
		t.Errorf("the forgets matched %d memories in all, want each of the %d writes once", got, writes)
	}
	var live, archived int
	err := engines[0].pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM archived WHERE reason = $1)`,
		storage.ArchiveReasonForget).Scan(&live, &archived)
	if err != nil {
		t.Fatal(err)
	}
	if live != 0 || archived != writes {
		t.Errorf("%d live, %d archived by forget; want 0 and %d", live, archived, writes)
	}
	for i, s := range engines {
		if err := s.CheckConsistency(ctx); err != nil {
			t.Errorf("engine %d: %v", i, err)
		}
	}
}

// TestRestoreRacesStore: one engine restores an archived memory while the
// other stores a memory of the same title, at once. Whichever commits
// first holds the title: either the restore wins and the store merges
// into it, or the store creates and the restore is refused as a conflict.
// Never two memories of one title, never a lost write.
func TestRestoreRacesStore(t *testing.T) {
	dsn := pgtest.DSN(t)
	var engines [2]*Store
	for i := range engines {
		s, err := Open(storagetest.Operator(), dsn, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		engines[i] = s
	}
	ctx := storagetest.Operator()
	outcomes := map[string]int{}
	for i := range 30 {
		title := fmt.Sprintf("contested %d", i)
		m, err := records.New(engines[0]).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "archived", Confidence: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := records.New(engines[0]).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{m.Memory.Id}, Archive: true}); err != nil {
			t.Fatal(err)
		}
		var (
			wg       sync.WaitGroup
			restored error
			stored   *aimemoryv1.StoreMemoryResponse
			storeErr error
		)
		wg.Go(func() {
			_, restored = records.New(engines[0]).RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: m.Memory.Id})
		})
		wg.Go(func() {
			stored, storeErr = records.New(engines[1]).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "stored", Confidence: 1}})
		})
		testwait.Wait(t, &wg, "the restore and the store")
		if storeErr != nil {
			t.Fatalf("%s: store: %v", title, storeErr)
		}
		var live, archived int
		err = engines[0].pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM memories WHERE title = $1), (SELECT count(*) FROM archived WHERE id = $2)`,
			title, m.Memory.Id).Scan(&live, &archived)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case restored == nil && stored.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_MERGED && stored.Memory.Id == m.Memory.Id && live == 1 && archived == 0:
			outcomes["restore first"]++
		case errors.Is(restored, storage.ErrConflict) && stored.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED && live == 1 && archived == 1:
			outcomes["store first"]++
		default:
			t.Fatalf("%s: restore %v, store %v, %d live, %d archive rows", title, restored, stored, live, archived)
		}
	}
	t.Logf("outcomes: %v", outcomes)
	for i, s := range engines {
		if err := s.CheckConsistency(ctx); err != nil {
			t.Errorf("engine %d: %v", i, err)
		}
	}
}
