package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Last-seen is noted in memory, read by ListAgents at once, and survives
// a restart once flushed, without a superseded version per flush.
func TestLastSeenFlushedToRegistry(t *testing.T) {
	clk := storagetest.NewClock()
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := Open(storagetest.Operator(), path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	r := records.New(s)
	alice := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:alice", Family: "meta", Scope: caller.AllNamespaces})
	if _, err := r.RegisterAgent(alice, &aimemoryv1.RegisterAgentRequest{AgentType: "ai:x"}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	r.NoteSeen("ai:alice")
	r.NoteSeen("ai:stranger") // not registered: nothing to write
	want := clk.Now().UnixNano()
	l, err := r.ListAgents(alice, &aimemoryv1.ListAgentsRequest{})
	if err != nil || len(l.Agents) != 1 || l.Agents[0].LastSeenAt != want {
		t.Fatalf("agents before the flush = %v, %v", l, err)
	}
	if n, err := r.FlushSeen(storagetest.Operator()); err != nil || n != 1 {
		t.Fatalf("flush = %d, %v", n, err)
	}
	st, _ := s.ArchiveStats(authz.System(storagetest.Operator()))
	if st.Versions != 0 {
		t.Errorf("a flush archived %d versions", st.Versions)
	}
	if err := s.CheckConsistency(storagetest.Operator()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(storagetest.Operator(), path, Options{Now: clk.Now}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if l, _ := records.New(s).ListAgents(alice, &aimemoryv1.ListAgentsRequest{}); len(l.Agents) != 1 || l.Agents[0].LastSeenAt != want {
		t.Errorf("agents after a restart = %v", l)
	}
}
