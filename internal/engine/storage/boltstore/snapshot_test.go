package boltstore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// crashCopy is what a kill -9 would leave of s now: its committed state,
// copied without closing it, opened as a store of its own.
func crashCopy(t *testing.T, s *Store) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crashed.db")
	if err := s.db.View(func(tx *bolt.Tx) error { return tx.CopyFile(path, 0o600) }); err != nil {
		t.Fatal(err)
	}
	c, err := Open(context.Background(), path, Options{Now: s.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func logLen(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketIndexLog).Stats().KeyN
		return nil
	})
	return n
}

// sameAnswers: two stores answer a few searches and lists alike.
func sameAnswers(t *testing.T, a, b *Store) {
	t.Helper()
	for _, q := range []string{"alpha", "beta note", "number 7", "gamma 12"} {
		for _, match := range []aimemoryv1.MatchMode{aimemoryv1.MatchMode_MATCH_MODE_ALL, aimemoryv1.MatchMode_MATCH_MODE_ANY} {
			req := &aimemoryv1.SearchMemoriesRequest{Query: q, Match: match, Limit: 50}
			x, y := storagetest.Search(t, a, req), storagetest.Search(t, b, proto.Clone(req).(*aimemoryv1.SearchMemoriesRequest))
			if !slices.Equal(storagetest.TitlesOf(x), storagetest.TitlesOf(y)) {
				t.Errorf("search %q %v: %q, want %q", q, match, storagetest.TitlesOf(y), storagetest.TitlesOf(x))
			}
		}
	}
	if a.Count() != b.Count() {
		t.Errorf("count %d, want %d", b.Count(), a.Count())
	}
}

// TestSnapshotAndLog: a store reopened after Close reads its snapshot; one
// "killed" after creates, merges, updates, touches and deletes replays the
// log over the snapshot and agrees with its records, as does a store
// whose snapshot is damaged (rebuilt from the term lists).
func TestSnapshotAndLog(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	var ids []string
	for i := range 300 {
		m := storagetest.Store(t, s, storagetest.Mem(fmt.Sprintf("note %d", i), fmt.Sprintf("alpha beta number %d gamma %d", i, i%17), storagetest.Tags(fmt.Sprintf("t%d", i%3))))
		ids = append(ids, m.Id)
	}
	s = reopen(t, s, Options{})
	if s.rebuilt {
		t.Error("reopened after Close without its snapshot")
	}
	if n := logLen(t, s); n != 0 {
		t.Fatalf("after Close the log holds %d", n)
	}
	checkConsistent(t, s)

	// Changes after the snapshot, then a crash.
	storagetest.Store(t, s, storagetest.Mem("note 5", "merged: only delta now"))
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: ids[6], Content: proto.String("epsilon")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: ids[7], Priority: proto.Int32(9)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: ids[10:20]}); err != nil {
		t.Fatal(err)
	}
	storagetest.Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "gamma", Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Limit: 5})
	fresh := storagetest.Store(t, s, storagetest.Mem("new note", "alpha gamma 12 zeta"))
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{fresh.Id}}); err != nil {
		t.Fatal(err)
	}
	storagetest.Store(t, s, storagetest.Mem("newer note", "alpha gamma 12 eta"))
	if n := logLen(t, s); n < 15 {
		t.Fatalf("the log holds %d memories, want at least 15", n)
	}
	crashed := crashCopy(t, s)
	if crashed.rebuilt {
		t.Error("the crashed copy did not use its snapshot")
	}
	checkConsistent(t, crashed)
	sameAnswers(t, s, crashed)

	// A damaged snapshot is rebuilt from the term lists.
	if err := crashed.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketIndexSnapshot)
		k, v := b.Cursor().First()
		v = slices.Clone(v)
		v[len(v)/2] ^= 1
		return b.Put(slices.Clone(k), v)
	}); err != nil {
		t.Fatal(err)
	}
	damaged := crashCopy(t, crashed)
	if !damaged.rebuilt {
		t.Error("a damaged snapshot was used")
	}
	checkConsistent(t, damaged)
	sameAnswers(t, s, damaged)
}

// TestSnapshotWhenLogIsLong: a long log gets a background snapshot, and
// writes after it are logged afresh.
func TestSnapshotWhenLogIsLong(t *testing.T) {
	defer func(n int) { minSnapshotLog = n }(minSnapshotLog)
	minSnapshotLog = 50
	s, _ := openTest(t, Options{})
	for i := range 120 {
		storagetest.Store(t, s, storagetest.Mem(fmt.Sprintf("note %d", i), fmt.Sprintf("alpha beta number %d", i)))
	}
	s.bg.Wait()
	if n := logLen(t, s); n >= 50 {
		t.Errorf("the log holds %d memories after a background snapshot", n)
	}
	crashed := crashCopy(t, s)
	if crashed.rebuilt {
		t.Error("no snapshot")
	}
	checkConsistent(t, crashed)
	sameAnswers(t, s, crashed)
}
