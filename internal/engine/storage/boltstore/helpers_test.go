package boltstore

import (
	"path/filepath"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
)

// Helpers of the tests that reach into the bbolt backend; the suite in
// storagetest has its own.

// openTest opens a store in a fresh temp dir with a test clock.
func openTest(t testing.TB, opts Options) (*Store, *storagetest.Clock) {
	t.Helper()
	c := storagetest.NewClock()
	if opts.Now == nil {
		opts.Now = c.Now
	}
	s, err := Open(storagetest.Operator(), filepath.Join(t.TempDir(), "memory.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

// reopen closes s and opens its file again with the same options.
func reopen(t testing.TB, s *Store, opts Options) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if opts.Now == nil {
		opts.Now = s.now
	}
	s2, err := Open(storagetest.Operator(), s.Path(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}
