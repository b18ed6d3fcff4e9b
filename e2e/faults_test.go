package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// faultPID runs fault_echo and returns the pid of the plugin that answered.
func faultPID(h *host) int {
	h.t.Helper()
	out := h.ok("fault_echo", map[string]any{})
	pid, ok := out["pid"].(float64)
	if !ok {
		h.t.Fatalf("fault_echo = %v", out)
	}
	return int(pid)
}

func TestHungPluginIsReplacedAfterTheCallTimeout(t *testing.T) {
	e := newEnv(t)
	e.pin("faults")
	e.writeConfig("[mcp]\ncall_timeout = \"1s\"\n")
	h := e.startHost([]string{"--profile", "core,faults"})
	hung := faultPID(h)

	start := time.Now()
	text, isErr := h.call("fault_hang", map[string]any{})
	answered := time.Since(start)
	if !isErr || !contains(text, "did not answer fault_hang within 1s", "stopped", "restarted on the next call") {
		t.Fatalf("hung call: %v %q", isErr, text)
	}
	fresh := faultPID(h)
	replaced := time.Since(start)
	if fresh == hung {
		t.Fatal("the hung plugin still answers")
	}
	eventually(t, 5*time.Second, "the hung plugin to exit", func() bool { return !alive(hung) })
	t.Logf("call_timeout 1s: hung call answered after %v; a fresh plugin answered %v after the hung call began (%v for the relaunch and call)",
		answered.Round(time.Millisecond), replaced.Round(time.Millisecond), (replaced - answered).Round(time.Millisecond))
}

func TestFailingCallsSpareTheRelaunchedPlugin(t *testing.T) {
	e := newEnv(t)
	e.pin("faults")
	h := e.startHost([]string{"--profile", "core,faults"})
	first := faultPID(h)

	// Three calls in flight on one instance, then a crash of that instance:
	// four failing calls, and a relaunch sent while they are being handled.
	const inFlight = 3
	failed := make(chan string, inFlight)
	for range inFlight {
		go func() {
			text, _, err := h.tryCall("fault_hang", map[string]any{})
			if err != nil {
				text = err.Error()
			}
			failed <- text
		}()
	}
	eventually(t, 10*time.Second, "the hanging calls to reach the plugin", func() bool {
		return strings.Count(h.stderr.String(), "fault_hang started") == inFlight
	})
	if text, isErr := h.call("fault_crash", map[string]any{}); !isErr || !contains(text, "stopped while running fault_crash") {
		t.Fatalf("crash: %v %q", isErr, text)
	}
	relaunched := faultPID(h)
	for range inFlight {
		if text := testwait.Recv(t, failed, "a call in flight on the crashed plugin to fail"); !contains(text, "stopped while running fault_hang") {
			t.Errorf("call in flight on the crashed plugin: %q", text)
		}
	}
	if relaunched == first {
		t.Fatal("the crashed plugin still answers")
	}
	// The late failures did not stop the relaunched plugin: it answers every later call.
	for range 5 {
		if pid := faultPID(h); pid != relaunched {
			t.Fatalf("plugin %d answered, want the relaunched %d (it was replaced again)", pid, relaunched)
		}
	}
	if !alive(relaunched) {
		t.Fatal("the relaunched plugin is gone")
	}
}
