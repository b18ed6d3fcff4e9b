package e2e

import (
	"encoding/binary"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

func (e *env) cli(args ...string) (string, int) {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(e.binDir, "ai-memory"), args...)
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
	e.editAudit(func(b *bolt.Bucket) error {
		var r aimemoryv1.AuditRecord
		if err := proto.Unmarshal(b.Get(seqKey(2)), &r); err != nil {
			return err
		}
		r.Granted = true
		raw, _ := proto.Marshal(&r)
		return b.Put(seqKey(2), raw)
	})
	out, code = e.cli("audit", "verify", "--json")
	v = nil
	json.NewDecoder(strings.NewReader(out)).Decode(&v)
	if code == 0 || v["ok"] != false || v["first_bad_seq"] != float64(2) {
		t.Fatalf("verify after an edit: exit %d %s", code, out)
	}

	// So does a removed one.
	e.stopEngine()
	e.editAudit(func(b *bolt.Bucket) error {
		var r aimemoryv1.AuditRecord
		proto.Unmarshal(b.Get(seqKey(2)), &r)
		r.Granted = false
		raw, _ := proto.Marshal(&r)
		b.Put(seqKey(2), raw) // undo the edit
		return b.Delete(seqKey(1))
	})
	out, code = e.cli("audit", "verify", "--json")
	v = nil
	json.NewDecoder(strings.NewReader(out)).Decode(&v)
	if code == 0 || v["ok"] != false {
		t.Fatalf("verify after a removal: exit %d %s", code, out)
	}
}
