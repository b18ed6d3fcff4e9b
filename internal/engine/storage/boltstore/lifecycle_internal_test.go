package boltstore

import (
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestForgetSeesItsBatch: a forget queued right behind a store of a
// matching memory joins the store's batch and must see it, although the
// in-memory index it reads has not reached the batch's earlier writes:
// it takes them as candidates too (writeTx.batchChanged). The same holds
// for an approved forget, which runs in an ordinary write.
func TestForgetSeesItsBatch(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := storagetest.Operator()
	s.writeMu.Lock() // a commit under way
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("lead", "x")})
	}()
	waitQueue(t, s, 0)
	var stored *aimemoryv1.StoreMemoryResponse
	go func() {
		defer wg.Done()
		stored, _ = records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("Draft notes", "queued first")})
	}()
	waitQueue(t, s, 1)
	var forgot *aimemoryv1.ForgetResponse
	var ferr error
	go func() {
		defer wg.Done()
		forgot, ferr = records.New(s).Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft notes"})
	}()
	waitQueue(t, s, 2)
	commits := s.commits
	s.writeMu.Unlock()
	testwait.Wait(t, &wg, "the store, the queued store and the forget")
	s.writeMu.Lock()
	batches := s.commits - commits
	s.writeMu.Unlock()
	if batches != 2 { // the leader's, then the store's with the forget in it
		t.Errorf("%d commits, want 2: the forget did not share the store's batch", batches)
	}
	if ferr != nil || stored == nil {
		t.Fatalf("forget %v, store %v", ferr, stored)
	}
	if forgot.Matched != 1 || forgot.Memories[0].Id != stored.Memory.Id {
		t.Errorf("forget matched %v, want the memory stored just before it", forgot.Memories)
	}
	if err := s.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}

// TestPurgeOfNothingOpensNoWrite: a purge (the engine's hourly one) that
// finds nothing old commits nothing: package records reads first.
func TestPurgeOfNothingOpensNoWrite(t *testing.T) {
	s, _ := openTest(t, Options{})
	ctx := storagetest.Operator()
	m := storagetest.Store(t, records.New(s), storagetest.Mem("archived", "fresh"))
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{m.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	s.writeMu.Lock()
	commits := s.commits
	s.writeMu.Unlock()
	r, err := records.New(s).PurgeArchive(ctx, &aimemoryv1.PurgeArchiveRequest{Before: 1})
	if err != nil || r.Purged+r.VersionsPurged != 0 {
		t.Fatalf("purge = %v, %v; want nothing purged", r, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.commits != commits {
		t.Errorf("%d commits for a purge of nothing", s.commits-commits)
	}
}
