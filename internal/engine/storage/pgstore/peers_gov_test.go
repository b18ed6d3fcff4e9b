package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// govPeers opens two stores on one fresh database, on one clock, as two
// engines on two machines would.
func govPeers(t *testing.T) ([2]*Store, *storagetest.Clock) {
	t.Helper()
	dsn := pgtest.DSN(t)
	clk := storagetest.NewClock()
	var engines [2]*Store
	chain := audit.Ephemeral() // engines of one database hold one audit key
	for i := range engines {
		s, err := Open(storagetest.Operator(), dsn, storage.Options{Now: clk.Now, Audit: chain})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		engines[i] = s
	}
	return engines, clk
}

func govCaller(principal string) context.Context {
	return caller.NewContext(context.Background(), caller.Caller{Principal: principal, Session: "s-" + principal, Family: "core", Scope: caller.AllNamespaces})
}

// TestPeersRacingApprovers: eight approvers, four on each engine, approve
// one queued store at once, for several queued stores in turn. Each
// action executes exactly once: one approval succeeds, the others find it
// decided, and one memory is written.
func TestPeersRacingApprovers(t *testing.T) {
	engines, clk := govPeers(t)
	ctx := storagetest.Operator()
	std, err := records.New(engines[0]).StoreMemory(govCaller("ai:alice"), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "gov rules", Content: "rules", Namespace: "gov", Confidence: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(engines[0]).SetStandard(govCaller("ai:alice"), &aimemoryv1.SetStandardRequest{Namespace: "gov", Id: std.Memory.Id, GovernanceJson: `{"write":"approve"}`}); err != nil {
		t.Fatal(err)
	}
	const rounds, racers = 6, 8
	for round := range rounds {
		clk.Add(time.Second) // newest first in the list
		title := fmt.Sprintf("queued %d", round)
		_, err := records.New(engines[1]).StoreMemory(govCaller("ai:bob"), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "awaiting approval", Namespace: "gov", Confidence: 1}})
		var pe *storage.PendingError
		if !errors.As(err, &pe) || pe.ID == "" {
			t.Fatalf("round %d: store on the other engine = %v, want queued (the standard set on engine 0 governs engine 1)", round, err)
		}
		var (
			wg      sync.WaitGroup
			results [racers]error
		)
		for i := range racers {
			wg.Go(func() {
				_, results[i] = records.New(engines[i%2]).ApprovePending(govCaller(fmt.Sprintf("ai:approver%d", i)), &aimemoryv1.DecidePendingRequest{Id: pe.ID})
			})
		}
		testwait.Wait(t, &wg, "the racing approvals")
		won := 0
		for i, err := range results {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, storage.ErrDecided):
				t.Errorf("round %d approver %d: %v, want ErrDecided", round, i, err)
			}
		}
		var written int
		if err := engines[0].pool.QueryRow(ctx, `SELECT count(*) FROM memories WHERE namespace = 'gov' AND title = $1`, title).Scan(&written); err != nil {
			t.Fatal(err)
		}
		if won != 1 || written != 1 {
			t.Fatalf("round %d: %d approvals succeeded and %d memories were written; want exactly one of each", round, won, written)
		}
		for i, s := range engines {
			list, err := records.New(s).ListPending(ctx, &aimemoryv1.ListPendingRequest{Status: "approved"})
			if err != nil || len(list.Pending) != round+1 || list.Pending[0].Id != pe.ID || list.Pending[0].ResultMemoryId == "" {
				t.Fatalf("round %d: engine %d's approved list = %v, %v", round, i, list, err)
			}
			got, err := records.New(s).GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{list.Pending[0].ResultMemoryId}})
			if err != nil || len(got.Memories) != 1 || got.Memories[0].CreatedBy != "ai:bob" {
				t.Fatalf("round %d: engine %d reads the executed memory as %v, %v; want bob's", round, i, got, err)
			}
		}
	}
	for i, s := range engines {
		if err := s.CheckConsistency(ctx); err != nil {
			t.Errorf("engine %d: %v", i, err)
		}
	}
}

// TestPeersAuditOneChain: appends from two engines at once form one
// chain: consecutive seqs, each record chained to the one before, and the
// chain verifies from either engine with the same head.
func TestPeersAuditOneChain(t *testing.T) {
	engines, _ := govPeers(t)
	ctx := storagetest.Operator()
	const writers, appends = 4, 25
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seqs = map[uint64]bool{}
	)
	for w := range writers {
		wg.Go(func() {
			for i := range appends {
				r, err := records.New(engines[w%2]).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: fmt.Sprintf("ai:w%d", w), Event: "capability_expansion", Family: "graph", Granted: i%2 == 0})
				if err != nil {
					t.Errorf("writer %d append %d: %v", w, i, err)
					return
				}
				mu.Lock()
				if seqs[r.Seq] {
					t.Errorf("seq %d assigned twice", r.Seq)
				}
				seqs[r.Seq] = true
				mu.Unlock()
			}
		})
	}
	testwait.Wait(t, &wg, "the audit writers")
	const total = writers * appends
	if len(seqs) != total {
		t.Fatalf("%d distinct seqs for %d appends", len(seqs), total)
	}
	var heads [2]string
	for i, s := range engines {
		v, err := records.New(s).VerifyAudit(ctx, audit.Head{})
		if err != nil || !v.Ok || v.Count != total {
			t.Fatalf("engine %d verifies %v, %v; want an intact chain of %d", i, v, err, total)
		}
		heads[i] = v.HeadHash
		list, err := records.New(s).ListAudit(ctx, "ai:w1", 1000)
		if err != nil || len(list) != appends {
			t.Fatalf("engine %d lists %d of ai:w1's %d records: %v", i, len(list), appends, err)
		}
	}
	if heads[0] != heads[1] {
		t.Errorf("the engines see different heads: %s, %s", heads[0], heads[1])
	}
}

// TestPeersAgentsSeen: an agent registered through one engine is in the
// other's registry and counts there (the policy level "registered"); a
// call seen by one engine shows in its list at once and in the other's
// after FlushSeen, which keeps registered_at.
func TestPeersAgentsSeen(t *testing.T) {
	engines, clk := govPeers(t)
	served := [2]*records.Store{records.New(engines[0]), records.New(engines[1])} // each engine's last-seen times are its own
	ctx := storagetest.Operator()
	reg, err := served[0].RegisterAgent(govCaller("ai:bob"), &aimemoryv1.RegisterAgentRequest{AgentType: "test", Capabilities: []string{"recall"}})
	if err != nil || !reg.Created {
		t.Fatalf("register: %v, %v", reg, err)
	}
	registeredAt := clk.Now().UnixNano()
	clk.Add(time.Minute)
	again, err := served[1].RegisterAgent(govCaller("ai:bob"), &aimemoryv1.RegisterAgentRequest{AgentType: "test"})
	if err != nil || again.Created || again.Agent.Id != reg.Agent.Id {
		t.Fatalf("re-register on the other engine: %v, %v; want the same entry refreshed", again, err)
	}
	clk.Add(time.Minute)
	seen := clk.Now().UnixNano()
	served[0].NoteSeen("ai:bob")
	lastSeen := func(s *records.Store) int64 {
		t.Helper()
		l, err := s.ListAgents(ctx, &aimemoryv1.ListAgentsRequest{})
		if err != nil || len(l.Agents) != 1 || l.Agents[0].AgentId != "ai:bob" || l.Agents[0].RegisteredAt != registeredAt {
			t.Fatalf("agents = %v, %v; want bob, registered at %d", l, err, registeredAt)
		}
		return l.Agents[0].LastSeenAt
	}
	if got := lastSeen(served[0]); got != seen {
		t.Errorf("the seeing engine's last-seen = %d, want %d", got, seen)
	}
	if got := lastSeen(served[1]); got >= seen {
		t.Errorf("the other engine's last-seen = %d before the flush, want the registration's", got)
	}
	if n, err := served[0].FlushSeen(ctx); err != nil || n != 1 {
		t.Fatalf("flush = %d, %v", n, err)
	}
	if got := lastSeen(served[1]); got != seen {
		t.Errorf("the other engine's last-seen after the flush = %d, want %d", got, seen)
	}
	err = engines[1].write(ctx, func(w *writeTx) error {
		ok, err := govView{w: w}.Registered("ai:bob")
		if err == nil && !ok {
			err = errors.New("bob is not registered")
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}
