package boltstore

import (
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

func TestAuditChain(t *testing.T) {
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	for i, agent := range []string{"alice", "bob", "alice"} {
		r, err := s.AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: agent, Event: "capability_expansion", Family: "graph", Granted: i != 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.GetSeq() != uint64(i+1) || len(r.GetHash()) != 64 {
			t.Fatalf("record %d = %v", i, r)
		}
	}
	if _, err := s.AppendAudit(ctx, &aimemoryv1.AuditRecord{}); err == nil {
		t.Fatal("a record without an event was accepted")
	}
	list, err := s.ListAudit(ctx, "alice", 10)
	if err != nil || len(list) != 2 || list[0].GetSeq() != 3 {
		t.Fatalf("ListAudit(alice) = %v, %v", list, err)
	}
	v, err := s.VerifyAudit(ctx)
	if err != nil || !v.GetOk() || v.GetCount() != 3 || v.GetHeadHash() != list[0].GetHash() {
		t.Fatalf("verify intact = %v, %v", v, err)
	}

	tamper := func(fn func(b *bolt.Bucket)) {
		if err := s.db.Update(func(tx *bolt.Tx) error { fn(tx.Bucket(bucketAudit)); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var r2 aimemoryv1.AuditRecord
	s.db.View(func(tx *bolt.Tx) error { return proto.Unmarshal(tx.Bucket(bucketAudit).Get(seqKey(2)), &r2) })
	original, _ := proto.Marshal(&r2)

	edited := proto.Clone(&r2).(*aimemoryv1.AuditRecord)
	edited.Granted = true
	raw, _ := proto.Marshal(edited)
	tamper(func(b *bolt.Bucket) { b.Put(seqKey(2), raw) })
	if v, _ := s.VerifyAudit(ctx); v.GetOk() || v.GetFirstBadSeq() != 2 {
		t.Fatalf("edited record not caught: %v", v)
	}

	tamper(func(b *bolt.Bucket) { b.Put(seqKey(2), original); b.Delete(seqKey(2)) })
	if v, _ := s.VerifyAudit(ctx); v.GetOk() || v.GetFirstBadSeq() != 3 {
		t.Fatalf("removed record not caught: %v", v)
	}

	// Putting the genuine record back makes the chain whole again.
	tamper(func(b *bolt.Bucket) { b.Put(seqKey(2), original) })
	if v, _ := s.VerifyAudit(ctx); !v.GetOk() {
		t.Fatalf("restored chain: %v", v)
	}
}
