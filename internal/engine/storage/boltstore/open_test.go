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
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
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
	// bbolt's flock is per open file description, so a second open in this
	// process waits for the first like another process would, and gives up
	// at its timeout.
	if _, err := Open(storagetest.Operator(), path, Options{OpenTimeout: 200 * time.Millisecond}); !errors.Is(err, bolt.ErrTimeout) {
		t.Fatalf("second open: %v, want the lock timeout", err)
	}
}

func TestConcurrentWritesAndReads(t *testing.T) {
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	// Off the test goroutine a failure is reported (t.Errorf), never fatal.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				r, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem(fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("shared words writer%d", w), storagetest.Tags("t"))})
				if err != nil {
					t.Errorf("writer %d store %d: %v", w, i, err)
					return
				}
				id := r.GetMemory().GetId()
				if i%5 == 0 {
					if _, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: id, Content: proto.String("changed words")}); err != nil {
						t.Errorf("writer %d update %d: %v", w, i, err)
					}
				}
				if i%7 == 0 {
					if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{id}}); err != nil {
						t.Errorf("writer %d delete %d: %v", w, i, err)
					}
				}
			}
		})
		wg.Go(func() {
			for i := range 50 {
				if _, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "shared words", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Limit: 100}, nil); err != nil {
					t.Errorf("reader %d search %d: %v", w, i, err)
				}
				if _, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10}); err != nil {
					t.Errorf("reader %d list %d: %v", w, i, err)
				}
			}
		})
	}
	testwait.Wait(t, &wg, "the writers and readers")
	checkConsistent(t, s)
}
