package pgstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Governance costs on both backends: an audit append, and a queued store
// followed by its approval (two transactions: queue, then execute and mark).
//
//	go test ./internal/engine/storage/pgstore -run '^$' -bench 'Audit|Approve' -benchtime 500x

func BenchmarkAppendAudit(b *testing.B) {
	for _, name := range []string{"bbolt", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := benchBackends(b)[name]
			for b.Loop() {
				if _, err := s.AppendAudit(storagetest.Operator(), &aimemoryv1.AuditRecord{AgentId: "ai:bench", Event: "capability_expansion", Family: "graph", Granted: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkQueueAndApprove(b *testing.B) {
	for _, name := range []string{"bbolt", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := benchBackends(b)[name]
			std, err := s.StoreMemory(govCaller("ai:alice"), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "rules", Content: "rules", Namespace: "gov", Confidence: 1}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.SetStandard(govCaller("ai:alice"), &aimemoryv1.SetStandardRequest{Namespace: "gov", Id: std.Memory.Id, GovernanceJson: `{"write":"approve"}`}); err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				_, err := s.StoreMemory(govCaller("ai:bob"), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: fmt.Sprintf("queued %d", i), Content: "x", Namespace: "gov", Confidence: 1}})
				var pe *storage.PendingError
				if !errors.As(err, &pe) {
					b.Fatal(err)
				}
				if _, err := s.ApprovePending(govCaller("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: pe.ID}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
