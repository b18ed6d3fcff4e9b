package pgstore

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// TestAuditTampering: a record edited, removed or made unreadable in the
// database is caught by VerifyAudit at its seq; the genuine record put
// back makes the chain whole again. (The chain itself is the conformance
// suite's AuditChain.)
func TestAuditTampering(t *testing.T) {
	ctx := storagetest.Operator()
	s := open(t, storage.Options{})
	for i, agent := range []string{"alice", "bob", "alice"} {
		if _, err := s.AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: agent, Event: "capability_expansion", Family: "graph", Granted: i != 1}); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	var original []byte
	if err := s.pool.QueryRow(ctx, `SELECT record FROM audit WHERE seq = 2`).Scan(&original); err != nil {
		t.Fatal(err)
	}
	r2 := new(aimemoryv1.AuditRecord)
	if err := proto.Unmarshal(original, r2); err != nil {
		t.Fatal(err)
	}
	r2.Granted = true
	edited, _ := proto.Marshal(r2)

	for _, c := range []struct {
		name, sql string
		args      []any
		bad       uint64
	}{
		{"edited", `UPDATE audit SET record = $1 WHERE seq = 2`, []any{edited}, 2},
		{"unreadable", `UPDATE audit SET record = '\xffff'::bytea WHERE seq = 2`, nil, 2},
		{"removed", `DELETE FROM audit WHERE seq = 2`, nil, 3},
	} {
		exec(c.sql, c.args...)
		if v, err := s.VerifyAudit(ctx); err != nil || v.GetOk() || v.GetFirstBadSeq() != c.bad {
			t.Errorf("%s record: verify = %v, %v; want the chain broken at %d", c.name, v, err, c.bad)
		}
		exec(`INSERT INTO audit (seq, agent_id, record) VALUES (2, 'bob', $1) ON CONFLICT (seq) DO UPDATE SET record = EXCLUDED.record`, original)
		if v, err := s.VerifyAudit(ctx); err != nil || !v.GetOk() || v.GetCount() != 3 {
			t.Fatalf("after putting the genuine record back: %v, %v", v, err)
		}
	}
	// An append after a repair chains onto the head as before.
	r, err := s.AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "carol", Event: "capability_expansion"})
	if v, _ := s.VerifyAudit(ctx); err != nil || r.Seq != 4 || !v.GetOk() || v.GetHeadHash() != r.Hash {
		t.Fatalf("append after repair = %v, %v; verify %v", r, err, v)
	}
}
