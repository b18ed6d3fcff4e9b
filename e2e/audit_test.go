package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func (e *env) cli(args ...string) (string, int) {
	e.t.Helper()
	cmd := command(e.t, filepath.Join(e.binDir, "ai-memory"), args...)
	cmd.Env = e.environ()
	out, err := cmd.Output() // stdout only: JSON output stays parseable
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out) + string(ee.Stderr), ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return string(out), 0
}

// stopAll kills every process of this env and waits for the engine to go.
func (e *env) stopEngine(hosts ...*host) {
	e.t.Helper()
	for _, h := range hosts {
		h.kill9()
	}
	for _, pid := range e.enginePids() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	eventually(e.t, 5*time.Second, "engine to stop", func() bool { return len(e.enginePids()) == 0 })
}

// editAudit changes the stored audit log directly in the bbolt file.
func (e *env) editAudit(fn func(b *bolt.Bucket) error) {
	e.t.Helper()
	db, err := bolt.Open(filepath.Join(e.dataDir, "memory.db"), 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket([]byte("audit"))) }); err != nil {
		e.t.Fatal(err)
	}
}

func seqKey(seq uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, seq)
	return k
}

func TestAuditRecordsGrantsAndDenialsAndDetectsTampering(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(`[mcp]
expansion_interval = "0"
[mcp.allowlist]
"ai:e2e" = ["core", "echo"]
"mallory" = ["core"]
`)
	h := e.startHost(nil)
	h.ok("memory_capabilities", map[string]any{"family": "echo", "include_schema": true})
	m := e.startHost(nil, "AI_MEMORY_AGENT_ID=mallory")
	m.fails("memory_capabilities", map[string]any{"family": "echo", "include_schema": true}, "not cleared")
	m.fails("test_echo", map[string]any{}, "not cleared")
	// Name lists and unknown families are not expansion attempts.
	m.ok("memory_capabilities", map[string]any{"family": "echo"})
	m.fails("memory_capabilities", map[string]any{"family": "nope", "include_schema": true}, "unknown family")

	out, code := e.cli("audit", "list", "--json")
	if code != 0 {
		t.Fatalf("audit list: exit %d\n%s", code, out)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("audit list --json: %v\n%s", err, out)
	}
	if len(rows) != 3 {
		t.Fatalf("want 3 audit rows (grant, denied expansion, denied call), got %d:\n%s", len(rows), out)
	}
	// Newest first.
	if rows[2]["agent_id"] != "ai:e2e-harness" || rows[2]["granted"] != true || rows[2]["event_type"] != "capability_expansion" {
		t.Errorf("grant row = %v", rows[2])
	}
	if rows[1]["agent_id"] != "mallory" || rows[1]["granted"] != false || rows[0]["event_type"] != "call_denied" || rows[0]["tool"] != "test_echo" {
		t.Errorf("deny rows = %v, %v", rows[1], rows[0])
	}
	if only, _ := e.cli("audit", "list", "--json", "--agent-id", "mallory"); strings.Count(only, `"agent_id"`) != 2 {
		t.Errorf("--agent-id filter:\n%s", only)
	}

	out, code = e.cli("audit", "verify", "--json")
	var v map[string]any
	json.Unmarshal([]byte(out), &v)
	if code != 0 || v["ok"] != true || v["count"] != float64(3) || len(v["head_hash"].(string)) != 64 {
		t.Fatalf("verify intact log: exit %d %s", code, out)
	}

	// An edited record breaks the chain at that record.
	e.stopEngine(h, m)
	raw := rawAudit{e}
	genuine := raw.records()
	edited := proto.Clone(genuine[1]).(*aimemoryv1.AuditRecord)
	edited.Granted = true
	raw.put(edited, genuine[2])
	out, code = e.cli("audit", "verify", "--json")
	v = nil
	json.NewDecoder(strings.NewReader(out)).Decode(&v)
	if code == 0 || v["ok"] != false || v["first_bad_seq"] != float64(2) {
		t.Fatalf("verify after an edit: exit %d %s", code, out)
	}

	// So does a removed one.
	e.stopEngine()
	raw.put(genuine[1:]...) // undo the edit
	raw.drop(1)
	out, code = e.cli("audit", "verify", "--json")
	v = nil
	json.NewDecoder(strings.NewReader(out)).Decode(&v)
	if code == 0 || v["ok"] != false {
		t.Fatalf("verify after a removal: exit %d %s", code, out)
	}
}

// rawAudit reaches an env's stored audit log directly, as whoever can
// write the database (the bbolt file, or PostgreSQL with the DSN) can.
type rawAudit struct{ e *env }

func (a rawAudit) records() []*aimemoryv1.AuditRecord {
	var out []*aimemoryv1.AuditRecord
	if a.e.dsn == "" {
		a.e.editAudit(func(b *bolt.Bucket) error {
			return b.ForEach(func(_, v []byte) error {
				r := new(aimemoryv1.AuditRecord)
				out = append(out, r)
				return proto.Unmarshal(v, r)
			})
		})
		return out
	}
	a.pg(func(conn *pgx.Conn) error {
		rows, _ := conn.Query(context.Background(), `SELECT record FROM audit ORDER BY seq`)
		raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		for _, raw := range raws {
			r := new(aimemoryv1.AuditRecord)
			out = append(out, r)
			if err := proto.Unmarshal(raw, r); err != nil {
				return err
			}
		}
		return err
	})
	return out
}

// put stores records as they are; on PostgreSQL audit_head follows the last.
func (a rawAudit) put(rs ...*aimemoryv1.AuditRecord) {
	if a.e.dsn == "" {
		a.e.editAudit(func(b *bolt.Bucket) error {
			for _, r := range rs {
				raw, _ := proto.Marshal(r)
				if err := b.Put(seqKey(r.GetSeq()), raw); err != nil {
					return err
				}
			}
			return nil
		})
		return
	}
	a.pg(func(conn *pgx.Conn) error {
		for _, r := range rs {
			raw, _ := proto.Marshal(r)
			if _, err := conn.Exec(context.Background(), `INSERT INTO audit (seq, agent_id, record) VALUES ($1, $2, $3)
				ON CONFLICT (seq) DO UPDATE SET record = EXCLUDED.record`, int64(r.GetSeq()), r.GetAgentId(), raw); err != nil {
				return err
			}
		}
		last := rs[len(rs)-1]
		_, err := conn.Exec(context.Background(), `UPDATE audit_head SET seq = $1, hash = $2`, int64(last.GetSeq()), last.GetHash())
		return err
	})
}

// cut removes the records from seq on; on PostgreSQL audit_head is moved
// to the one before, so the database is self-consistent.
func (a rawAudit) cut(from uint64, before *aimemoryv1.AuditRecord) {
	if a.e.dsn == "" {
		a.e.editAudit(func(b *bolt.Bucket) error {
			c := b.Cursor()
			for k, _ := c.Seek(seqKey(from)); k != nil; k, _ = c.Seek(seqKey(from)) {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		return
	}
	a.pg(func(conn *pgx.Conn) error {
		if _, err := conn.Exec(context.Background(), `DELETE FROM audit WHERE seq >= $1`, int64(from)); err != nil {
			return err
		}
		_, err := conn.Exec(context.Background(), `UPDATE audit_head SET seq = $1, hash = $2`, int64(before.GetSeq()), before.GetHash())
		return err
	})
}

// drop removes one record (on PostgreSQL audit_head stays as it was).
func (a rawAudit) drop(seq uint64) {
	if a.e.dsn == "" {
		a.e.editAudit(func(b *bolt.Bucket) error { return b.Delete(seqKey(seq)) })
		return
	}
	a.pg(func(conn *pgx.Conn) error {
		_, err := conn.Exec(context.Background(), `DELETE FROM audit WHERE seq = $1`, int64(seq))
		return err
	})
}

func (a rawAudit) pg(fn func(*pgx.Conn) error) {
	a.e.t.Helper()
	conn, err := pgx.Connect(context.Background(), a.e.dsn)
	if err != nil {
		a.e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := fn(conn); err != nil {
		a.e.t.Fatal(err)
	}
}

// verifyAudit runs audit verify --json and its text form.
func (e *env) verifyAudit() (v map[string]any, text string, code int) {
	e.t.Helper()
	out, code := e.cli("audit", "verify", "--json")
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&v); err != nil {
		e.t.Fatalf("audit verify --json: %v\n%s", err, out)
	}
	text, textCode := e.cli("audit", "verify")
	if textCode != code {
		e.t.Fatalf("audit verify exits %d, with --json %d", textCode, code)
	}
	return v, text, code
}

// TestAuditRewriteAndCutAreCaught, on bbolt and on PostgreSQL: someone
// who can write the database edits a record and recomputes the tail (the
// unkeyed rule is all they have), or cuts the tail (moving audit_head
// along); audit verify fails on both and says where. With the data dir's
// pin removed it still verifies, and says it had nothing to compare with.
func TestAuditRewriteAndCutAreCaught(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := newEnv(t)
			if backend == "postgres" && e.dsn == "" {
				e.usePostgres(pgtest.DSN(t))
			}
			e.writeConfig("[mcp.allowlist]\n\"mallory\" = [\"core\"]\n")
			m := e.startHost(nil, "AI_MEMORY_AGENT_ID=mallory")
			for range 4 {
				m.fails("test_echo", map[string]any{}, "not cleared")
			}
			v, text, code := e.verifyAudit()
			if code != 0 || v["ok"] != true || v["count"] != float64(4) || !strings.Contains(text, "hashes: HMAC-SHA-256 under") {
				t.Fatalf("verify intact log: exit %d %v\n%s", code, v, text)
			}
			if backend == "postgres" && !strings.Contains(text, "audit_head") {
				t.Errorf("verify on PostgreSQL does not say it checked audit_head:\n%s", text)
			}
			e.stopEngine(m)
			raw := rawAudit{e}
			genuine := raw.records()
			if len(genuine) != 4 {
				t.Fatalf("%d stored records, want 4", len(genuine))
			}

			edited := make([]*aimemoryv1.AuditRecord, len(genuine))
			for i, r := range genuine {
				edited[i] = proto.Clone(r).(*aimemoryv1.AuditRecord)
			}
			edited[1].Reason = "allowlist rule granted"
			storagetest.Rechain(edited, 1)
			raw.put(edited[1:]...)
			v, text, code = e.verifyAudit()
			if code != 1 || v["ok"] != false || v["first_bad_seq"] != float64(2) || !strings.Contains(text, "unkeyed record after keyed ones") {
				t.Errorf("edit with its tail recomputed: exit %d %v\n%s", code, v, text)
			}

			e.stopEngine()
			raw.put(genuine...)
			if v, text, code = e.verifyAudit(); code != 0 || v["ok"] != true {
				t.Fatalf("genuine records back: exit %d\n%s", code, text)
			}

			e.stopEngine()
			raw.cut(4, genuine[2])
			v, text, code = e.verifyAudit()
			if code != 1 || v["first_bad_seq"] != float64(4) || v["pinned_seq"] != float64(4) || !strings.Contains(text, "removed from its end") {
				t.Errorf("cut tail: exit %d %v\n%s", code, v, text)
			}

			e.stopEngine()
			raw.put(genuine...)
			pin := filepath.Join(e.dataDir, "audit.pin")
			if err := os.Remove(pin); err != nil {
				t.Fatal(err)
			}
			if text, code := e.cli("audit", "verify"); code != 0 || !strings.Contains(text, "pin: none in") || !strings.Contains(text, "pinned now: record 4") {
				t.Errorf("without a pin: exit %d\n%s", code, text)
			}
			e.stopEngine() // it keeps the pin in memory too
			os.Remove(pin)
			out, code := e.cli("audit", "verify", "--json")
			if code != 0 || !strings.Contains(out, `"pinned_seq": 0`) {
				t.Errorf("without a pin, --json: exit %d\n%s", code, out)
			}
		})
	}
}

// TestEngineRefusalsAreAudited: what the engine refuses a plugin (an audit
// append, calls without or with a rewritten assertion) is in audit list
// with the principal where there is one, and a flood of refused calls on
// the engine's socket leaves no more records than the rate limit allows.
func TestEngineRefusalsAreAudited(t *testing.T) {
	e := newEnv(t)
	e.pin("faults")
	h := e.startHost([]string{"--profile", "core,faults", "--agent-id", "ai:probe"})
	started := time.Now()
	if got := h.ok("fault_engine_probe", map[string]any{}); got["audit_append"] != "PermissionDenied" || got["without_assertion"] != "Unauthenticated" {
		t.Fatalf("probe = %v", got)
	}
	conn, err := wire.DialEngineAt(filepath.Join(e.dataDir, "engine.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const flood = 500
	for range flood {
		if _, err := conn.ListMemories(context.Background(), &aimemoryv1.ListMemoriesRequest{Limit: 1}); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("a call without an assertion: %v", err)
		}
	}
	took := time.Since(started)

	out, code := e.cli("audit", "list", "--json", "--limit", "1000")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("audit list: exit %d %v\n%s", code, err, out)
	}
	denied, unauthenticated := 0, 0
	for _, r := range rows {
		switch r["event_type"] {
		case "access_denied":
			denied++
			if r["agent_id"] != "ai:probe" || r["family"] != "faults" || r["tool"] != "Audit/AppendAudit" || r["granted"] != false {
				t.Errorf("denied row = %v", r)
			}
		case "unauthenticated":
			unauthenticated++
			if r["agent_id"] != "" || r["tool"] != "Memories/ListMemories" {
				t.Errorf("unauthenticated row = %v", r)
			}
		}
	}
	if bound := 20 + int(took.Seconds()) + 1; denied != 1 || unauthenticated < 2 || unauthenticated > bound {
		t.Errorf("%d denied rows (want 1), %d unauthenticated rows for %d refused calls in %v (want 2 to %d)", denied, unauthenticated, flood+2, took, bound)
	}
	if v, _, code := e.verifyAudit(); code != 0 || v["ok"] != true {
		t.Errorf("chain after the flood: exit %d %v", code, v)
	}
}

// TestRestoreCarriesTheAuditKey: a backup restored into another data dir
// verifies there, and goes on, only with the audit.key it was keyed under
// (restore --audit-key); without it restore says so.
func TestRestoreCarriesTheAuditKey(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[mcp.allowlist]\n\"mallory\" = [\"core\"]\n")
	m := e.startHost(nil, "AI_MEMORY_AGENT_ID=mallory")
	m.fails("test_echo", map[string]any{}, "not cleared")
	dir := filepath.Dir(e.dataDir)
	file := filepath.Join(dir, "backup.db")
	if out, code := e.cli("backup", file); code != 0 {
		t.Fatalf("backup: %s", out)
	}
	restore := func(name string, args ...string) string {
		r := &env{t: t, dataDir: filepath.Join(dir, name), config: e.config, binDir: bins}
		out, code := r.cli(append([]string{"restore", file}, args...)...)
		if code != 0 {
			t.Fatalf("restore %v: exit %d\n%s", args, code, out)
		}
		return out
	}
	if out := restore("without"); !strings.Contains(out, "audit log: does not verify here") || !strings.Contains(out, "--audit-key") {
		t.Errorf("restore without the audit key:\n%s", out)
	}
	if out := restore("with", "--audit-key", filepath.Join(e.dataDir, "audit.key")); !strings.Contains(out, "audit log: intact, 1 records") {
		t.Errorf("restore with the audit key:\n%s", out)
	}
}
