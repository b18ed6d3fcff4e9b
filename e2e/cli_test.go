package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoCommandPrintsHelp: `ai-memory` alone is a question, answered with
// the usage and exit 0.
func TestNoCommandPrintsHelp(t *testing.T) {
	out, code := newEnv(t).cli()
	if code != 0 || !strings.Contains(out, "Usage: ai-memory <command>") || !strings.Contains(out, "mcp") {
		t.Fatalf("no command: exit %d\n%s", code, out)
	}
}

// TestDoctorOnAFreshMachine: no config file is "none (defaults)", not ok;
// a data dir that does not exist yet is reported missing. Neither is a
// failure, and doctor creates nothing.
func TestDoctorOnAFreshMachine(t *testing.T) {
	e := newEnv(t)
	e.config = filepath.Join(filepath.Dir(e.dataDir), "no-such-config.toml")
	out, code := e.doctor("--json")
	var r struct {
		Healthy bool `json:"healthy"`
		Checks  []struct {
			Name, Status, Detail string
			OK                   bool
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || !r.Healthy {
		t.Fatalf("doctor --json: exit %d, %v\n%s", code, err, out)
	}
	status := map[string]string{}
	for _, c := range r.Checks {
		status[c.Name] = c.Status
	}
	if status["config"] != "none" || status["data dir"] != "missing" || status["engine"] != "idle" || status["plugin ai-memory-core"] != "ok" {
		t.Errorf("statuses %v\n%s", status, out)
	}
	human, _ := e.doctor()
	words := strings.Join(strings.Fields(human), " ")
	for _, want := range []string{"none config (defaults) no file at " + e.config, "missing data dir", "does not exist yet"} {
		if !strings.Contains(words, want) {
			t.Errorf("report lacks %q:\n%s", want, human)
		}
	}
	if _, err := os.Stat(e.dataDir); !os.IsNotExist(err) {
		t.Errorf("doctor created the data dir: %v", err)
	}
}

// TestAuditVerifyNeedsADataDir: verifying the audit log of a data dir that
// does not exist is an error, not a fresh empty chain, and creates nothing.
func TestAuditVerifyNeedsADataDir(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"audit", "verify"}, {"audit", "verify", "--json"}, {"audit", "list"}} {
		out, code := e.cli(args...)
		if code == 0 || !strings.Contains(out, "no data dir at "+e.dataDir) {
			t.Errorf("%v on a missing data dir: exit %d\n%s", args, code, out)
		}
	}
	if _, err := os.Stat(e.dataDir); !os.IsNotExist(err) {
		t.Fatalf("audit created the data dir: %v", err)
	}
	// A data dir nothing was stored in (no memory.db) is refused the same way.
	if err := os.Mkdir(e.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, code := e.cli("audit", "verify"); code == 0 || !strings.Contains(out, "nothing was ever stored there") {
		t.Errorf("audit verify on an empty data dir: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(e.dataDir, "memory.db")); !os.IsNotExist(err) {
		t.Errorf("audit verify created a database: %v", err)
	}
}

// shellEnv is this process's environment as a shell's, for running make:
// not a sub-make's (MAKEFLAGS and its kin), without the variables drop names.
func shellEnv(drop func(k string) bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MAKELEVEL" && k != "MFLAGS" && !drop(k) {
			env = append(env, kv)
		}
	}
	return env
}

// TestMakeRunPrintsOnlyMCP: `make run` is what a newcomer points a client
// at, so its stdout must carry MCP and nothing else (the build reports on
// stderr).
func TestMakeRunPrintsOnlyMCP(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	e := newEnv(t)
	cmd := commandWithin(t, toolDeadline, "make", "run", "BIN="+filepath.Join(filepath.Dir(e.dataDir), "bin"))
	cmd.Dir = repoRoot()
	// As typed at a shell: not a sub-make of `make test` (which would print
	// "Entering directory"), with the Go caches of this test run.
	cmd.Env = shellEnv(func(k string) bool { return strings.HasPrefix(k, "AI_MEMORY_") })
	cmd.Env = append(cmd.Env, "AI_MEMORY_DATA_DIR="+e.dataDir, "AI_MEMORY_CONFIG="+e.config, "AI_MEMORY_ENGINE_IDLE_TIMEOUT=3s")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"make-run","version":"1"}}}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make run: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	lines := 0
	for sc.Scan() {
		lines++
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("stdout line %d is not MCP: %q", lines, sc.Text())
		}
	}
	if lines != 1 || !strings.Contains(stderr.String(), "go build") {
		t.Fatalf("stdout %q (want the one initialize response); stderr:\n%s", out, stderr.String())
	}
}
