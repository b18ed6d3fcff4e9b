package boltstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// auditRecords appends n records and returns them as stored.
func auditRecords(t *testing.T, s *Store, n int) []*aimemoryv1.AuditRecord {
	t.Helper()
	var out []*aimemoryv1.AuditRecord
	for i := range n {
		r, err := records.New(s).AppendAudit(context.Background(), &aimemoryv1.AuditRecord{AgentId: []string{"alice", "bob"}[i%2], Event: "call_denied", Family: "graph"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// putAudit writes records into the audit bucket as they are, the way
// someone holding the file would.
func putAudit(t *testing.T, s *Store, rs ...*aimemoryv1.AuditRecord) {
	t.Helper()
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketAudit)
		if err != nil {
			return err
		}
		for _, r := range rs {
			raw, _ := proto.Marshal(r)
			if err := b.Put(seqKey(r.GetSeq()), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func clone(rs []*aimemoryv1.AuditRecord) []*aimemoryv1.AuditRecord {
	out := make([]*aimemoryv1.AuditRecord, len(rs))
	for i, r := range rs {
		out[i] = proto.Clone(r).(*aimemoryv1.AuditRecord)
	}
	return out
}

// TestAuditTampering: a record edited, removed or unreadable is caught at
// its seq; an edit whose tail is recomputed (with the only rule a writer
// without audit.key has) is caught at the edit; a cut tail is caught
// against the engine's pin, and only then; and the genuine records put
// back make the chain whole again.
func TestAuditTampering(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	genuine := auditRecords(t, s, 5)
	pin := audit.HeadOf(genuine[4])
	verify := func(pin audit.Head) *aimemoryv1.VerifyAuditResponse {
		t.Helper()
		v, err := records.New(s).VerifyAudit(ctx, pin)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := verify(pin); !v.GetOk() || v.GetCount() != 5 || v.GetHeadHash() != pin.Hash || v.GetUnkeyed() != 0 {
		t.Fatalf("verify intact = %v", v)
	}

	edited := clone(genuine)
	edited[2].Granted = true
	putAudit(t, s, edited[2])
	if v := verify(pin); v.GetOk() || v.GetFirstBadSeq() != 3 || !strings.Contains(v.GetProblem(), "edited") {
		t.Errorf("edited record: %v", v)
	}
	storagetest.Rechain(edited, 2)
	putAudit(t, s, edited[2:]...)
	if v := verify(audit.Head{}); v.GetOk() || v.GetFirstBadSeq() != 3 || !strings.Contains(v.GetProblem(), "unkeyed record after keyed ones") {
		t.Errorf("edit with its tail recomputed, no pin: %v", v)
	}
	// Rewriting the whole log unkeyed is caught without a pin too.
	storagetest.Rechain(edited, 0)
	putAudit(t, s, edited...)
	if v := verify(audit.Head{}); v.GetOk() || v.GetFirstBadSeq() != 1 || !strings.Contains(v.GetProblem(), "no keyed record follows") {
		t.Errorf("whole log recomputed unkeyed: %v", v)
	}
	if v := verify(pin); v.GetOk() {
		t.Errorf("whole log recomputed unkeyed, against the pin: %v", v)
	}
	putAudit(t, s, genuine...)

	err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketAudit).Delete(seqKey(5)) })
	if err != nil {
		t.Fatal(err)
	}
	if v := verify(pin); v.GetOk() || v.GetFirstBadSeq() != 5 || !strings.Contains(v.GetProblem(), "removed from its end") {
		t.Errorf("cut tail against the pin: %v", v)
	}
	if v := verify(audit.Head{}); !v.GetOk() || v.GetCount() != 4 {
		t.Errorf("cut tail without a pin is a shorter intact chain (what the pin is for): %v", v)
	}
	// Appending onto the cut tail takes seq 5 again: another record under
	// the pinned seq.
	if _, err := records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:x", Event: "call_denied"}); err != nil {
		t.Fatal(err)
	}
	if v := verify(pin); v.GetOk() || v.GetFirstBadSeq() != 5 || !strings.Contains(v.GetProblem(), "not the record this engine pinned") {
		t.Errorf("cut tail grown again, against the pin: %v", v)
	}

	for _, c := range []struct {
		name string
		do   func(b *bolt.Bucket) error
		bad  uint64
	}{
		{"removed", func(b *bolt.Bucket) error { return b.Delete(seqKey(2)) }, 3},
		{"unreadable", func(b *bolt.Bucket) error { return b.Put(seqKey(2), []byte{0xff, 0xff}) }, 2},
	} {
		putAudit(t, s, genuine...)
		if err := s.db.Update(func(tx *bolt.Tx) error { return c.do(tx.Bucket(bucketAudit)) }); err != nil {
			t.Fatal(err)
		}
		if v := verify(pin); v.GetOk() || v.GetFirstBadSeq() != c.bad {
			t.Errorf("%s record: %v, want broken at %d", c.name, v, c.bad)
		}
	}
	putAudit(t, s, genuine...)
	if v := verify(pin); !v.GetOk() || v.GetCount() != 5 {
		t.Fatalf("genuine records back: %v", v)
	}
}

// TestAuditRefusesForeignHeads: nothing is chained onto a last record this
// key does not verify (another key's, or unkeyed and not sealed), so a
// misconfigured engine cannot mix keys into one chain; the seal may
// follow an unkeyed record.
func TestAuditRefusesForeignHeads(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	unkeyed := storagetest.UnkeyedAudit(2)
	putAudit(t, s, unkeyed...)
	_, err := records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:x", Event: "call_denied"})
	var he *audit.HeadError
	if !errors.As(err, &he) || he.Seq != 2 || !strings.Contains(err.Error(), "unkeyed") {
		t.Fatalf("append onto an unkeyed record: %v", err)
	}
	seal, err := records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "engine", Event: audit.EventKeyed})
	if err != nil || seal.GetSeq() != 3 || seal.GetPrevHash() != unkeyed[1].GetHash() {
		t.Fatalf("seal = %v, %v", seal, err)
	}
	if v, _ := records.New(s).VerifyAudit(ctx, audit.Head{}); !v.GetOk() || v.GetUnkeyed() != 2 || v.GetCount() != 3 {
		t.Fatalf("sealed log: %v", v)
	}

	other, _ := openTest(t, Options{})
	foreign := auditRecords(t, other, 1)[0]
	foreign.Seq, foreign.PrevHash = 4, seal.GetHash()
	putAudit(t, s, foreign)
	_, err = records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:x", Event: "call_denied"})
	if !errors.As(err, &he) || he.Seq != 4 || !strings.Contains(err.Error(), "copy audit.key") {
		t.Fatalf("append onto another key's record: %v", err)
	}
}
