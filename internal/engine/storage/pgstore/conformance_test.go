package pgstore

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open is a fresh store on a fresh database, closed when t ends.
func open(t testing.TB, opts storage.Options) *Store {
	t.Helper()
	s, err := Open(storagetest.Operator(), pgtest.DSN(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the whole backend-neutral suite against
// PostgreSQL: the tests boltstore passes, unchanged.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, opts storage.Options) storage.Backend { return records.New(open(t, opts)) })
}
