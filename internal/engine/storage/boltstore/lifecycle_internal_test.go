package boltstore

import (
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// TestForgetLeadsItsBatch: a forget queued right behind a store of a
// matching memory must see it, although it reads the in-memory index,
// which a batch's earlier writes have not reached yet: the forget leads
// the next batch instead of joining the store's.
func TestForgetLeadsItsBatch(t *testing.T) {
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
		forgot, ferr = s.Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft notes"})
	}()
	waitQueue(t, s, 2)
	s.writeMu.Unlock()
	wg.Wait()
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
