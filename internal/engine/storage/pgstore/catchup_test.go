package pgstore

import (
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// A write that took its seq first but commits last is not lost by an
// engine that caught up in between: the skipped seq is a hole, asked for
// again until it shows up.
func TestCatchUpSeesOutOfOrderCommit(t *testing.T) {
	dsn := pgtest.DSN(t)
	var s [3]*Store
	for i := range s {
		st, err := Open(storagetest.Operator(), dsn, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s[i] = st
	}
	slow, fast, reader := s[0], s[1], s[2]
	logged, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- slow.write(storagetest.Operator(), func(w *writeTx) error {
			resp := &aimemoryv1.StoreMemoryResponse{}
			if err := ops.Store(opsTx{w}, storagetest.Mem("slow zebra", "logged first, committed last"), 0, resp); err != nil {
				return err
			}
			close(logged)
			<-release // holds its seq, uncommitted
			return nil
		})
	}()
	testwait.Recv(t, logged, "the slow write to log its event")
	storagetest.Store(t, records.New(fast), storagetest.Mem("fast zebra", "logged second, committed first"))
	if got := search(t, reader, "zebra"); len(got) != 1 || got[0] != "fast zebra" {
		t.Fatalf("before the slow commit: %v", got)
	}
	if len(reader.pos.holes) != 1 {
		t.Fatalf("holes = %v, want the slow write's seq", reader.pos.holes)
	}
	close(release)
	if err := testwait.Recv(t, done, "the slow write to commit"); err != nil {
		t.Fatal(err)
	}
	if got := search(t, reader, "zebra"); len(got) != 2 {
		t.Fatalf("after the slow commit: %v", got)
	}
	if len(reader.pos.holes) != 0 {
		t.Fatalf("holes = %v after the slow commit", reader.pos.holes)
	}
	for i, st := range s {
		if err := st.CheckConsistency(storagetest.Operator()); err != nil {
			t.Errorf("engine %d: %v", i, err)
		}
	}
}

func search(t *testing.T, s *Store, q string) []string {
	t.Helper()
	resp, err := s.SearchMemories(storagetest.Operator(), &aimemoryv1.SearchMemoriesRequest{Query: q, Limit: 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, r := range resp.Results {
		titles = append(titles, r.Memory.Title)
	}
	return titles
}
