package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestAuditTampering: with the database writable (the DSN's holder), a
// record edited, removed or made unreadable is caught at its seq; an edit
// whose tail is recomputed with the unkeyed rule is caught at the edit; a
// tail cut with audit_head left as it was is caught by the head row, and
// cut with audit_head moved too, by the engine's pin; the genuine records
// put back make the chain whole again.
func TestAuditTampering(t *testing.T) {
	ctx := storagetest.Operator()
	s := open(t, storage.Options{})
	var genuine []*aimemoryv1.AuditRecord
	for i, agent := range []string{"alice", "bob", "alice", "bob", "carol"} {
		r, err := records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: agent, Event: "capability_expansion", Family: "graph", Granted: i != 1})
		if err != nil {
			t.Fatal(err)
		}
		genuine = append(genuine, r)
	}
	pin := audit.HeadOf(genuine[4])
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	// put writes records (and, with head, audit_head) as someone with the DSN would.
	put := func(head bool, rs ...*aimemoryv1.AuditRecord) {
		t.Helper()
		for _, r := range rs {
			raw, _ := proto.Marshal(r)
			exec(`INSERT INTO audit (seq, agent_id, record) VALUES ($1, $2, $3) ON CONFLICT (seq) DO UPDATE SET record = EXCLUDED.record`, int64(r.Seq), r.AgentId, raw)
		}
		if head {
			last := rs[len(rs)-1]
			exec(`UPDATE audit_head SET seq = $1, hash = $2`, int64(last.Seq), last.Hash)
		}
	}
	restore := func() {
		t.Helper()
		exec(`DELETE FROM audit`)
		put(true, genuine...)
	}
	verify := func(pin audit.Head) *aimemoryv1.VerifyAuditResponse {
		t.Helper()
		v, err := records.New(s).VerifyAudit(ctx, pin)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := verify(pin); !v.GetOk() || v.GetCount() != 5 || !v.GetCheckedHeadRow() {
		t.Fatalf("verify intact = %v", v)
	}

	edited := make([]*aimemoryv1.AuditRecord, len(genuine))
	for i, r := range genuine {
		edited[i] = proto.Clone(r).(*aimemoryv1.AuditRecord)
	}
	edited[2].Granted = false
	storagetest.Rechain(edited, 2)
	put(true, edited[2:]...)
	if v := verify(audit.Head{}); v.GetOk() || v.GetFirstBadSeq() != 3 || !strings.Contains(v.GetProblem(), "unkeyed record after keyed ones") {
		t.Errorf("edit with its tail and audit_head recomputed: %v", v)
	}
	restore()

	e2 := proto.Clone(genuine[1]).(*aimemoryv1.AuditRecord)
	e2.Granted = true
	for _, c := range []struct {
		name, sql string
		args      []any
		bad       uint64
	}{
		{"edited", `UPDATE audit SET record = $1 WHERE seq = 2`, []any{mustMarshal(e2)}, 2},
		{"unreadable", `UPDATE audit SET record = '\xffff'::bytea WHERE seq = 2`, nil, 2},
		{"removed", `DELETE FROM audit WHERE seq = 2`, nil, 3},
		{"tail cut, head row kept", `DELETE FROM audit WHERE seq = 5`, nil, 5},
	} {
		exec(c.sql, c.args...)
		if v := verify(audit.Head{}); v.GetOk() || v.GetFirstBadSeq() != c.bad {
			t.Errorf("%s: verify = %v; want the chain broken at %d", c.name, v, c.bad)
		}
		restore()
		if v := verify(pin); !v.GetOk() || v.GetCount() != 5 {
			t.Fatalf("after putting the genuine records back: %v", v)
		}
	}

	// A cut tail with audit_head moved to match is a shorter intact chain:
	// only the engine's pin tells.
	exec(`DELETE FROM audit WHERE seq > 3`)
	exec(`UPDATE audit_head SET seq = 3, hash = $1`, genuine[2].Hash)
	if v := verify(audit.Head{}); !v.GetOk() || v.GetCount() != 3 {
		t.Errorf("cut tail and head row, no pin: %v", v)
	}
	if v := verify(pin); v.GetOk() || v.GetFirstBadSeq() != 4 || !strings.Contains(v.GetProblem(), "removed from its end") {
		t.Errorf("cut tail and head row, against the pin: %v", v)
	}
	restore()

	// An append after a repair chains onto the head as before.
	r, err := records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "carol", Event: "capability_expansion"})
	if v := verify(pin); err != nil || r.Seq != 6 || !v.GetOk() || v.GetHeadHash() != r.Hash {
		t.Fatalf("append after repair = %v, %v; verify %v", r, err, v)
	}
	// audit_head naming another record than the last stops appends.
	exec(`UPDATE audit_head SET hash = 'x'`)
	var he *audit.HeadError
	if _, err := records.New(s).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "carol", Event: "x"}); !errors.As(err, &he) || he.Seq != 6 {
		t.Errorf("append under a rewritten head row: %v", err)
	}
}

// TestAuditEnginesWithAnotherKey: an engine whose audit.key is not the
// one the database's log is keyed with appends nothing (its records would
// break the chain for every other engine), and says which file to copy.
func TestAuditEnginesWithAnotherKey(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	a, err := Open(ctx, dsn, storage.Options{Audit: audit.Ephemeral()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, dsn, storage.Options{Audit: audit.Ephemeral()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := records.New(a).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:a", Event: "call_denied"}); err != nil {
		t.Fatal(err)
	}
	_, err = records.New(b).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:b", Event: "call_denied"})
	var he *audit.HeadError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "copy audit.key") {
		t.Fatalf("append by an engine with another key: %v", err)
	}
	if v, err := records.New(a).VerifyAudit(ctx, audit.Head{}); err != nil || !v.GetOk() || v.GetCount() != 1 {
		t.Fatalf("the first engine's chain: %v, %v", v, err)
	}
}

func mustMarshal(m proto.Message) []byte {
	raw, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return raw
}
