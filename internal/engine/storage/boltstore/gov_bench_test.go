package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/benchutil"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkStorePolicy is one fsynced store into team/a/b with no policy
// anywhere, against one where team's standard carries a policy the caller
// passes (write: owner, the caller owning team): the chain walk, the
// policy parse and the owner check on every write. Interleaved, so the
// machine's load falls on both alike.
func BenchmarkStorePolicy(b *testing.B) {
	ctx := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Family: "core", Scope: caller.AllNamespaces})
	open := func(policy bool) *Store {
		s, err := Open(ctx, filepath.Join(b.TempDir(), "memory.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		c := newCorpus(3)
		for i := range 1000 {
			m := c.memory(i)
			m.Namespace = "team/a/b"
			if _, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m}); err != nil {
				b.Fatal(err)
			}
		}
		if policy {
			std, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "rules", Content: "team rules", Namespace: "team", Confidence: 1}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := records.New(s).SetStandard(ctx, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: std.Memory.Id, GovernanceJson: `{"write":"owner"}`}); err != nil {
				b.Fatal(err)
			}
		}
		return s
	}
	stores := [2]*Store{open(false), open(true)}
	var lat [2][]time.Duration
	c := newCorpus(11)
	i := 0
	for b.Loop() {
		k := i % 2
		m := c.memory(1_000_000 + i)
		m.Namespace = "team/a/b"
		i++
		start := time.Now()
		if _, err := records.New(stores[k]).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: m}); err != nil {
			b.Fatal(err)
		}
		lat[k] = append(lat[k], time.Since(start))
	}
	benchutil.ReportPercentiles(b, lat[0], "none")
	benchutil.ReportPercentiles(b, lat[1], "policy")
}

// BenchmarkGovernGate is the gate alone, as a store into team/a/b asks it
// inside its transaction: with no standard in the chain, and with team's
// policy (parse and owner check included).
func BenchmarkGovernGate(b *testing.B) {
	ctx := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Family: "core", Scope: caller.AllNamespaces})
	for _, policy := range []bool{false, true} {
		name := "none"
		if policy {
			name = "policy"
		}
		b.Run(name, func(b *testing.B) {
			s, err := Open(ctx, filepath.Join(b.TempDir(), "memory.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if policy {
				std, _ := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "rules", Content: "r", Namespace: "team", Confidence: 1}})
				if _, err := records.New(s).SetStandard(ctx, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: std.Memory.Id, GovernanceJson: `{"write":"owner"}`}); err != nil {
					b.Fatal(err)
				}
			}
			m := &aimemoryv1.Memory{Title: "t", Namespace: "team/a/b"}
			tx, err := s.db.Begin(false)
			if err != nil {
				b.Fatal(err)
			}
			defer tx.Rollback()
			w := storage.Write{Op: storage.OpStore, New: m, View: govView{tx: tx, cfg: s.gov}}
			for b.Loop() {
				if err := storage.Authorize(ctx, nil, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
