package storagetest

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// testAuditChain: appends get consecutive seqs and chained hashes, list is
// newest first per agent, and an intact chain verifies with its head.
// (Tampering is backend-specific: see each backend's own tests.)
func testAuditChain(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	if v, err := s.VerifyAudit(ctx); err != nil || !v.GetOk() || v.GetCount() != 0 {
		t.Fatalf("verify empty = %v, %v", v, err)
	}
	var prev *aimemoryv1.AuditRecord
	for i, agent := range []string{"alice", "bob", "alice"} {
		in := &aimemoryv1.AuditRecord{AgentId: agent, Event: "capability_expansion", Family: "graph", Granted: i != 1, Seq: 99, Hash: "forged"}
		r, err := s.AppendAudit(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want := audit.Next(prev, in, clk.Now().UnixNano())
		if r.GetSeq() != uint64(i+1) || r.GetHash() != want.GetHash() || r.GetPrevHash() != prev.GetHash() || r.GetAt() != clk.Now().UnixNano() {
			t.Fatalf("record %d = %v, want %v", i, r, want)
		}
		prev = r
	}
	if _, err := s.AppendAudit(ctx, &aimemoryv1.AuditRecord{}); err == nil {
		t.Fatal("a record without an event was accepted")
	}
	list, err := s.ListAudit(ctx, "alice", 10)
	if err != nil || len(list) != 2 || list[0].GetSeq() != 3 || list[1].GetSeq() != 1 {
		t.Fatalf("ListAudit(alice) = %v, %v", list, err)
	}
	if all, _ := s.ListAudit(ctx, "", 2); len(all) != 2 || all[0].GetSeq() != 3 {
		t.Fatalf("ListAudit(limit 2) = %v", all)
	}
	v, err := s.VerifyAudit(ctx)
	if err != nil || !v.GetOk() || v.GetCount() != 3 || v.GetHeadHash() != list[0].GetHash() {
		t.Fatalf("verify intact = %v, %v", v, err)
	}
}
