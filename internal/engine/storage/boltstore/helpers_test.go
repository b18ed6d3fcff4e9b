package boltstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
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
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), opts)
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
	s2, err := Open(context.Background(), s.Path(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

func mem(title, content string, mod ...func(*aimemoryv1.Memory)) *aimemoryv1.Memory {
	m := &aimemoryv1.Memory{Title: title, Content: content, Confidence: 1}
	for _, f := range mod {
		f(m)
	}
	return m
}

func inNS(ns string) func(*aimemoryv1.Memory) { return func(m *aimemoryv1.Memory) { m.Namespace = ns } }
func tier(t string) func(*aimemoryv1.Memory)  { return func(m *aimemoryv1.Memory) { m.Tier = t } }
func tags(ts ...string) func(*aimemoryv1.Memory) {
	return func(m *aimemoryv1.Memory) { m.Tags = ts }
}

func store(t testing.TB, s *Store, m *aimemoryv1.Memory) *aimemoryv1.Memory {
	t.Helper()
	resp, err := s.StoreMemory(context.Background(), &aimemoryv1.StoreMemoryRequest{Memory: m})
	if err != nil {
		t.Fatalf("store %q: %v", m.GetTitle(), err)
	}
	return resp.Memory
}

func search(t testing.TB, s *Store, req *aimemoryv1.SearchMemoriesRequest) []*aimemoryv1.ScoredMemory {
	t.Helper()
	if req.Limit == 0 {
		req.Limit = 100
	}
	resp, err := s.SearchMemories(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Results
}

func titlesOf(results []*aimemoryv1.ScoredMemory) []string {
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.Memory.Title
	}
	return out
}
