package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(storagetest.Operator(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, binary.BigEndian.AppendUint32(nil, SchemaVersion+1))
	})
	s.Close()
	_, err = Open(storagetest.Operator(), path, Options{})
	var tooNew *storage.SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Found != SchemaVersion+1 {
		t.Errorf("open newer schema: %v", err)
	}
}

func TestOpenLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(storagetest.Operator(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	// bbolt's flock is per open file description, so a second open in this
	// process waits for the first like another process would.
	if _, err := Open(storagetest.Operator(), path, Options{OpenTimeout: 200 * time.Millisecond}); err == nil {
		t.Fatal("second open succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second open took %v", d)
	}
}

func TestConcurrentWritesAndReads(t *testing.T) {
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				m := storagetest.Store(t, s, storagetest.Mem(fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("shared words writer%d", w), storagetest.Tags("t")))
				if i%5 == 0 {
					s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Content: proto.String("changed words")})
				}
				if i%7 == 0 {
					s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{m.Id}})
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				storagetest.Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "shared words", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY})
				s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10})
			}
		})
	}
	wg.Wait()
	checkConsistent(t, s)
}
