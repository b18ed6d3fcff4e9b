package boltstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Tests of the bbolt backend that reach into its internals (transactions,
// buckets); the backend-neutral behaviour is in storagetest, run by
// TestConformance.

func TestExpiryIndexIsOneSeek(t *testing.T) {
	s, clk := openTest(t, Options{})
	storagetest.Store(t, records.New(s), storagetest.Mem("a", "x", storagetest.Tier("short")))
	storagetest.Store(t, records.New(s), storagetest.Mem("b", "x", storagetest.Tier("long")))
	storagetest.Store(t, records.New(s), storagetest.Mem("c", "x"))
	var keys []int64
	s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketExpiry).ForEach(func(k, _ []byte) error {
			at, _ := splitExpiryKey(k)
			keys = append(keys, at)
			return nil
		})
	})
	now := clk.Now().UnixNano()
	if len(keys) != 2 || keys[0] != now+int64(6*time.Hour) || keys[1] != now+int64(7*24*time.Hour) {
		t.Errorf("expiry index = %v", keys)
	}
}

func TestNoFreeVersion(t *testing.T) {
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	err := s.write(ctx, func(w *writeTx) error {
		for n := 1; n <= storage.MaxVersion; n++ {
			title := "T"
			if n > 1 {
				title = fmt.Sprintf("T (%d)", n)
			}
			m, _ := rules.New(storagetest.Mem(title, "x"))
			if err := w.create(m, &aimemoryv1.StoreMemoryResponse{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("T", "x"), OnConflict: aimemoryv1.ConflictPolicy_CONFLICT_POLICY_VERSION})
	var nf *storage.NoFreeVersionError
	if !errors.As(err, &nf) || !errors.Is(err, storage.ErrConflict) {
		t.Errorf("err = %v", err)
	}
}

// TestAccessCountSaturates: the touch counter stops at rules.MaxAccessCount.
func TestAccessCountSaturates(t *testing.T) {
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	touch := func(id string) *aimemoryv1.Memory {
		t.Helper()
		resp, err := records.New(s).TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: []string{id}})
		if err != nil || len(resp.Memories) != 1 {
			t.Fatalf("touch: %v, %v", resp, err)
		}
		return resp.Memories[0]
	}
	m := storagetest.Store(t, records.New(s), storagetest.Mem("Saturated", "x", storagetest.Tier("long")))
	err := s.write(ctx, func(w *writeTx) error {
		old, _ := w.get(m.Id)
		n := rules.Clone(old)
		n.AccessCount = rules.MaxAccessCount
		return w.put(old, n, "test")
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := touch(m.Id); got.AccessCount != rules.MaxAccessCount {
		t.Errorf("access count %d", got.AccessCount)
	}
}
