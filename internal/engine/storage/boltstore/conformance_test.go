package boltstore

import (
	"path/filepath"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
)

// TestConformance runs the backend-neutral suite against bbolt.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, opts storage.Options) storage.Backend {
		s, err := Open(storagetest.Operator(), filepath.Join(t.TempDir(), "memory.db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return records.New(s)
	})
}
