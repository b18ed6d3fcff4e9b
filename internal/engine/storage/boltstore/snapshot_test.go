package boltstore

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// crashCopy is what a kill -9 would leave of s now: its committed state,
// copied without closing it, opened as a store of its own.
func crashCopy(t *testing.T, s *Store) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crashed.db")
	if err := s.db.View(func(tx *bolt.Tx) error { return tx.CopyFile(path, 0o600) }); err != nil {
		t.Fatal(err)
	}
	c, err := Open(storagetest.Operator(), path, Options{Now: s.now})
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
	for _, q := range []string{"alpha", "beta note", "number 7", "gamma 12", "theta", "iota", "eta", "zeta"} {
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
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	var ids []string
	for i := range 300 {
		m := storagetest.Store(t, records.New(s), storagetest.Mem(fmt.Sprintf("note %d", i), fmt.Sprintf("alpha beta number %d gamma %d", i, i%17), storagetest.Tags(fmt.Sprintf("t%d", i%3))))
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
	storagetest.Store(t, records.New(s), storagetest.Mem("note 5", "merged: only delta now"))
	if _, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: ids[6], Content: proto.String("epsilon")}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: ids[7], Priority: proto.Int32(9)}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: ids[10:20]}); err != nil {
		t.Fatal(err)
	}
	storagetest.Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "gamma", Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Limit: 5})
	fresh := storagetest.Store(t, records.New(s), storagetest.Mem("new note", "alpha gamma 12 zeta"))
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{fresh.Id}}); err != nil {
		t.Fatal(err)
	}
	before := logLen(t, s)
	storagetest.Store(t, records.New(s), storagetest.Mem("newer note", "alpha gamma 12 eta"))
	if n := logLen(t, s); n != before {
		t.Errorf("a new memory added %d log entries; its event names it", n-before)
	}
	// Created since the snapshot and changed again: logged, though the
	// snapshot does not hold it.
	changed := storagetest.Store(t, records.New(s), storagetest.Mem("newest note", "alpha theta"))
	if _, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: changed.Id, Content: proto.String("alpha beta iota")}); err != nil {
		t.Fatal(err)
	}
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
		storagetest.Store(t, records.New(s), storagetest.Mem(fmt.Sprintf("note %d", i), fmt.Sprintf("alpha beta number %d", i)))
	}
	testwait.Wait(t, &s.bg, "the background snapshot")
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

// TestReplayNeedsEveryEventSince: the memories created since a snapshot
// are found through the event log; when it no longer holds every event
// since (trimmed past the snapshot), the index is rebuilt instead.
func TestReplayNeedsEveryEventSince(t *testing.T) {
	s, _ := openTest(t, Options{})
	for i := range 20 {
		storagetest.Store(t, records.New(s), storagetest.Mem(fmt.Sprintf("note %d", i), fmt.Sprintf("alpha beta number %d", i)))
	}
	s = reopen(t, s, Options{})
	for i := range 5 {
		storagetest.Store(t, records.New(s), storagetest.Mem(fmt.Sprintf("later %d", i), fmt.Sprintf("alpha gamma %d", i)))
	}
	if n := logLen(t, s); n != 0 {
		t.Fatalf("new memories left %d log entries", n)
	}
	crashed := crashCopy(t, s)
	if crashed.rebuilt {
		t.Error("the crashed copy did not use its snapshot")
	}
	checkConsistent(t, crashed)
	sameAnswers(t, s, crashed)

	// The first event after the snapshot gone: the log cannot say which
	// memories are new, so the index is rebuilt, and agrees.
	if err := crashed.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEventsLog).Cursor()
		since := tx.Bucket(bucketMeta).Get(keySnapshotSeq)
		c.Seek(seqKey(binary.BigEndian.Uint64(since) + 1))
		return c.Delete()
	}); err != nil {
		t.Fatal(err)
	}
	trimmed := crashCopy(t, crashed)
	if !trimmed.rebuilt {
		t.Error("a snapshot was used without every event since")
	}
	checkConsistent(t, trimmed)
	sameAnswers(t, s, trimmed)
}

// TestSnapshotWhenManyEvents: writes that log events but no new index
// log entries (one memory changed again and again) still bring a snapshot before the event
// log could trim past the last one.
func TestSnapshotWhenManyEvents(t *testing.T) {
	defer func(n uint64) { eventRetention = n }(eventRetention)
	eventRetention = 40
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	a := storagetest.Store(t, records.New(s), storagetest.Mem("a", "alpha"))
	storagetest.Store(t, records.New(s), storagetest.Mem("b", "beta"))
	s = reopen(t, s, Options{})
	for i := range 60 {
		if _, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: a.Id, Priority: proto.Int32(int32(1 + i%9))}); err != nil {
			t.Fatal(err)
		}
		testwait.Wait(t, &s.bg, "the background snapshot")
	}
	storagetest.Store(t, records.New(s), storagetest.Mem("c", "gamma"))
	crashed := crashCopy(t, s)
	if crashed.rebuilt {
		t.Error("the event log trimmed past the snapshot")
	}
	checkConsistent(t, crashed)
	sameAnswers(t, s, crashed)
}
