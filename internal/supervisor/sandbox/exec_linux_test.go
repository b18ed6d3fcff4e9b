package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// The test binary plays both parts: with policyEnv set it is the launcher
// (Exec), and the program it launches, confined, reports what it could do.
const (
	policyEnv = "SANDBOX_TEST_POLICY"
	probeEnv  = "SANDBOX_TEST_PROBE" // JSON: files to read, a dir to write, a program, a socket
)

type probe struct {
	Read    []string
	WriteIn string
	Run     string
	Dial    string
}

func TestMain(m *testing.M) {
	if raw := os.Getenv(policyEnv); raw != "" {
		os.Unsetenv(policyEnv)
		p, err := ParsePolicy(raw)
		if err == nil {
			err = Exec(p)
		}
		fmt.Println("launcher:", err)
		os.Exit(3)
	}
	if raw := os.Getenv(probeEnv); raw != "" {
		var p probe
		json.Unmarshal([]byte(raw), &p)
		report := map[string]string{}
		for _, f := range p.Read {
			report["read "+f] = errText(readErr(f))
		}
		report["write"] = errText(os.WriteFile(filepath.Join(p.WriteIn, "x"), []byte("x"), 0o600))
		report["run"] = errText(exec.Command(p.Run).Run())
		c, err := net.Dial("unix", p.Dial)
		if err == nil {
			c.Close()
		}
		report["dial"] = errText(err)
		stdin, _ := io.ReadAll(os.Stdin)
		report["stdin"] = fmt.Sprintf("%q", stdin)
		out, _ := json.Marshal(report)
		fmt.Println(string(out))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func readErr(path string) error {
	_, err := os.ReadFile(path)
	return err
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// launch runs this test binary through the launcher under policy p, with
// pr for the launched part; it returns the launched part's report, or the
// launcher's failure.
func launch(t *testing.T, p Policy, pr probe) (map[string]string, string) {
	t.Helper()
	pol, _ := json.Marshal(p)
	raw, _ := json.Marshal(pr)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), policyEnv+"="+string(pol), probeEnv+"="+string(raw))
	cmd.Stdin = strings.NewReader("the host's stdin")
	out, _ := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("the launched binary did not exit within %v", testwait.Deadline)
	}
	var report map[string]string
	if json.Unmarshal(out, &report) != nil {
		return nil, string(out)
	}
	return report, ""
}

func selfPolicy(t *testing.T) Policy {
	t.Helper()
	self, err := filepath.EvalSymlinks(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return Policy{Binary: self, SHA256: hex.EncodeToString(sum[:]), Read: SystemReadable(), Write: SystemWritable()}
}

// Confined, the launched program reads the system's directories and
// writes its own, but reads nothing else, runs no other program, and
// still reaches a unix socket in a directory it cannot read; its stdin is
// /dev/null.
func TestExecConfines(t *testing.T) {
	if ABI() == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI's kernel must offer Landlock")
		}
		t.Skip("this kernel offers no Landlock")
	}
	secretDir, work := t.TempDir(), t.TempDir()
	secret := filepath.Join(secretDir, "engine.key")
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(secretDir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	p := selfPolicy(t)
	p.Write = append(p.Write, work)
	report, failed := launch(t, p, probe{Read: []string{secret, "/etc/passwd"}, WriteIn: work, Run: "/bin/true", Dial: sock})
	if failed != "" {
		t.Fatalf("launch: %s", failed)
	}
	want := map[string]string{
		"read " + secret:   "permission denied",
		"read /etc/passwd": "ok",
		"write":            "ok",
		"run":              "permission denied",
		"dial":             "ok",
		"stdin":            `""`, // not the host's
	}
	for k, w := range want {
		if !strings.Contains(report[k], w) {
			t.Errorf("%s: %q, want %q", k, report[k], w)
		}
	}
}

// The launcher runs nothing whose checksum is not the pinned one, and no
// script.
func TestExecRefuses(t *testing.T) {
	p := selfPolicy(t)
	p.SHA256 = strings.Repeat("0", 64)
	if _, failed := launch(t, p, probe{}); !strings.Contains(failed, "but "+p.SHA256+" was pinned") {
		t.Errorf("another checksum: %q", failed)
	}
	script := filepath.Join(t.TempDir(), "plugin.sh")
	body := []byte("#!/bin/sh\necho hi\n")
	if err := os.WriteFile(script, body, 0o700); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if _, failed := launch(t, Policy{Binary: script, SHA256: hex.EncodeToString(sum[:])}, probe{}); !strings.Contains(failed, "is a script") {
		t.Errorf("a script: %q", failed)
	}
}
