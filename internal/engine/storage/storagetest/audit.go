package storagetest

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// testAuditChain: appends get consecutive seqs and hashes keyed with the
// store's chain, list is newest first per agent, export is in seq order,
// an intact chain verifies with its head, and a pin the chain does not
// hold (past its end, or another hash) fails verification. (Tampering is
// backend-specific: see each backend's own tests.)
func testAuditChain(t *testing.T, o Opener) {
	ctx := Operator()
	chain := audit.Ephemeral()
	s, clk := o.open(t, storage.Options{Audit: chain})
	if v, err := s.VerifyAudit(ctx, audit.Head{}); err != nil || !v.GetOk() || v.GetCount() != 0 || v.GetKeyFingerprint() != chain.Fingerprint() {
		t.Fatalf("verify empty = %v, %v", v, err)
	}
	var prev *aimemoryv1.AuditRecord
	var all []*aimemoryv1.AuditRecord
	for i, agent := range []string{"alice", "bob", "alice"} {
		in := &aimemoryv1.AuditRecord{AgentId: agent, Event: "capability_expansion", Family: "graph", Granted: i != 1, Seq: 99, Hash: "forged", Suppressed: uint64(i)}
		r, err := s.AppendAudit(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := chain.Next(prev, in, clk.Now().UnixNano())
		if err != nil || r.GetSeq() != uint64(i+1) || r.GetHash() != want.GetHash() || r.GetPrevHash() != prev.GetHash() || r.GetAt() != clk.Now().UnixNano() {
			t.Fatalf("record %d = %v, want %v (%v)", i, r, want, err)
		}
		if chain.KindOf(r) != audit.Keyed {
			t.Fatalf("record %d is not keyed", i)
		}
		prev = r
		all = append(all, r)
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
	if r, err := s.AuditRecordAt(ctx, 2); err != nil || r.GetHash() != all[1].GetHash() {
		t.Fatalf("AuditRecordAt(2) = %v, %v", r, err)
	}
	if r, err := s.AuditRecordAt(ctx, 4); err != nil || r != nil {
		t.Fatalf("AuditRecordAt(4) = %v, %v; want none", r, err)
	}
	var exported []uint64
	if err := s.ExportAudit(ctx, func(r *aimemoryv1.AuditRecord) error { exported = append(exported, r.GetSeq()); return nil }); err != nil || len(exported) != 3 || exported[0] != 1 || exported[2] != 3 {
		t.Fatalf("ExportAudit = %v, %v", exported, err)
	}

	for _, pin := range []audit.Head{{}, audit.HeadOf(all[0]), audit.HeadOf(all[2])} {
		v, err := s.VerifyAudit(ctx, pin)
		if err != nil || !v.GetOk() || v.GetCount() != 3 || v.GetHeadHash() != all[2].GetHash() || v.GetPinnedSeq() != pin.Seq {
			t.Fatalf("verify intact, pinned at %d = %v, %v", pin.Seq, v, err)
		}
	}
	for _, c := range []struct {
		pin audit.Head
		bad uint64
	}{
		{audit.Head{Seq: 5, Hash: "beyond"}, 4},         // a tail this engine saw is gone
		{audit.Head{Seq: 2, Hash: all[0].GetHash()}, 2}, // another record under the pinned seq
	} {
		if v, err := s.VerifyAudit(ctx, c.pin); err != nil || v.GetOk() || v.GetFirstBadSeq() != c.bad {
			t.Errorf("verify against pin %v = %v, %v; want broken at %d", c.pin, v, err, c.bad)
		}
	}
}

// UnkeyedAudit is n audit records chained the way logs were before they
// were keyed (audit.UnkeyedHash), as an older release wrote them.
func UnkeyedAudit(n int) []*aimemoryv1.AuditRecord {
	rs := make([]*aimemoryv1.AuditRecord, n)
	for i := range rs {
		rs[i] = &aimemoryv1.AuditRecord{Seq: uint64(i + 1), At: int64(1_700_000_000_000_000_000 + i), AgentId: "ai:old", Event: "call_denied", Family: "graph", Reason: "allowlist rule default"}
	}
	Rechain(rs, 0)
	return rs
}

// Rechain recomputes prev_hash and hash of rs[from:] with the unkeyed
// rule: all that whoever edits stored records without the key can do.
func Rechain(rs []*aimemoryv1.AuditRecord, from int) {
	for i := from; i < len(rs); i++ {
		rs[i].PrevHash = ""
		if i > 0 {
			rs[i].PrevHash = rs[i-1].GetHash()
		}
		rs[i].Hash = audit.UnkeyedHash(rs[i])
	}
}
