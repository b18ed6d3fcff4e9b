package audit_test

import (
	"context"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkAppend: one audit append on bbolt, by the store alone and
// through the engine's Log (which also rewrites and syncs audit.pin).
//
//	go test ./internal/engine/audit -run '^$' -bench Append -benchtime 300x
func BenchmarkAppend(b *testing.B) {
	rec := &aimemoryv1.AuditRecord{AgentId: "ai:bench", Event: "access_denied", Family: "core", Tool: "Memories/StoreMemory", Reason: "namespace: 'x' is outside the namespaces ai:bench may use"}
	for _, name := range []string{"store", "log"} {
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			c, err := audit.OpenChain(dir)
			if err != nil {
				b.Fatal(err)
			}
			s, _ := openStore(b, dir, c)
			l, err := audit.Open(context.Background(), s, c, dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			append := s.AppendAudit
			if name == "log" {
				append = l.Append
			}
			for b.Loop() {
				if _, err := append(context.Background(), rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerify10k: audit verify of a 10k-record log on bbolt (one op =
// the whole chain; HMAC-SHA-256 per record).
func BenchmarkVerify10k(b *testing.B) {
	dir := b.TempDir()
	c, err := audit.OpenChain(dir)
	if err != nil {
		b.Fatal(err)
	}
	rs := make([]*aimemoryv1.AuditRecord, 0, 10_000)
	var last *aimemoryv1.AuditRecord
	for range 10_000 {
		r, err := c.Next(last, &aimemoryv1.AuditRecord{AgentId: "ai:bench", Event: "call_denied", Family: "graph"}, 1)
		if err != nil {
			b.Fatal(err)
		}
		rs, last = append(rs, r), r
	}
	writeRaw(b, dir, rs...)
	s, _ := openStore(b, dir, c)
	for b.Loop() {
		v, err := s.VerifyAudit(context.Background(), audit.Head{})
		if err != nil || !v.GetOk() {
			b.Fatal(v, err)
		}
	}
}
