package pgstore

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestTwoEnginesOneDatabase: two stores (as two engines would open them)
// on one database write the same titles at once. No lock is shared between
// them; the unique constraint and SERIALIZABLE retries make it behave like
// one engine: every write acknowledged, no title twice, each title merged
// into one memory holding one of its writes, and every superseded version
// archived.
func TestTwoEnginesOneDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	var engines [2]*Store
	clk := storagetest.NewClock() // ranking reads the time: one clock, one answer
	for i := range engines {
		s, err := Open(storagetest.Operator(), dsn, storage.Options{Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		engines[i] = s
	}
	const writers, writes, titles = 4, 60, 15
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		merged  int
	)
	for w := range writers {
		wg.Go(func() {
			s := engines[w%2]
			for i := range writes {
				resp, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("shared title %d", i%titles), Content: fmt.Sprintf("writer %d write %d", w, i), Confidence: 1,
				}})
				if err != nil {
					t.Errorf("writer %d write %d: %v", w, i, err)
					return
				}
				mu.Lock()
				if resp.Outcome == aimemoryv1.StoreOutcome_STORE_OUTCOME_CREATED {
					created++
				} else {
					merged++
				}
				mu.Unlock()
			}
		})
	}
	testwait.Wait(t, &wg, "the writers")
	if created != titles || created+merged != writers*writes {
		t.Fatalf("created %d, merged %d; want %d created of %d writes", created, merged, titles, writers*writes)
	}
	var rows, distinct, versions int
	err := engines[0].pool.QueryRow(storagetest.Operator(),
		`SELECT (SELECT count(*) FROM memories), (SELECT count(DISTINCT (namespace, title)) FROM memories), (SELECT count(*) FROM versions)`).
		Scan(&rows, &distinct, &versions)
	if err != nil {
		t.Fatal(err)
	}
	if rows != titles || distinct != titles || versions != merged {
		t.Fatalf("rows %d, distinct titles %d, archived versions %d; want %d, %d, %d", rows, distinct, versions, titles, titles, merged)
	}
	clk.Add(time.Millisecond) // every write in the past: the same updated_at order on both
	// Each engine's index has caught up with the other's writes: both
	// answer a search alike, and each index is a replay of the database.
	var answers [2]string
	for i, s := range engines {
		resp, err := s.SearchMemories(storagetest.Operator(), &aimemoryv1.SearchMemoriesRequest{Query: "shared title", Limit: 100}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != titles {
			t.Errorf("engine %d finds %d of the %d titles", i, len(resp.Results), titles)
		}
		answers[i] = prototext.Format(resp)
		if err := s.CheckConsistency(storagetest.Operator()); err != nil {
			t.Errorf("engine %d: %v", i, err)
		}
	}
	if answers[0] != answers[1] {
		t.Errorf("the engines answer one search differently:\n%s\n%s", answers[0], answers[1])
	}
}

// TestPeerWriteSeen: a memory stored through one engine is found by a
// search on the other right after the store is acknowledged.
func TestPeerWriteSeen(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, err := Open(storagetest.Operator(), dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(storagetest.Operator(), dsn, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := range 20 {
		s, peer := a, b
		if i%2 == 1 {
			s, peer = b, a
		}
		title := fmt.Sprintf("zebra crossing %d", i)
		if _, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "seen by the peer", Confidence: 1}}); err != nil {
			t.Fatal(err)
		}
		resp, err := peer.SearchMemories(storagetest.Operator(), &aimemoryv1.SearchMemoriesRequest{Query: fmt.Sprintf("zebra %d", i), Limit: 5}, nil)
		if err != nil || len(resp.Results) != 1 || resp.Results[0].Memory.Title != title {
			t.Fatalf("the peer's search for write %d = %v, %v", i, resp, err)
		}
	}
}
