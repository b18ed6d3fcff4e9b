package sdktest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Host is a real `ai-memory mcp` host spoken to over MCP on stdio, with a
// plugin pinned by `ai-memory plugin add` on a fresh config and data dir:
// the whole product around a family, as an agent sees it.
type Host struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     *json.Encoder
	out    *bufio.Scanner
	mu     sync.Mutex
	nextID int
	// DataDir and Config are the host's, for `ai-memory` commands of the test's own.
	DataDir, Config string
}

// StartHost pins plugin (a built family binary), then starts a host with
// the profile (for example "core,notes") and initializes an MCP session.
// Everything is stopped and removed when the test ends.
func StartHost(t testing.TB, plugin, profile string) *Host {
	t.Helper()
	bin := Binary(t)
	root, err := os.MkdirTemp("", "aimh")
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	h := &Host{t: t, DataDir: filepath.Join(root, "data"), Config: filepath.Join(root, "config.toml")}
	env := engineEnv(root, "AI_MEMORY_DATA_DIR="+h.DataDir, "AI_MEMORY_CONFIG="+h.Config, "AI_MEMORY_AGENT_ID=ai:sdktest",
		"AI_MEMORY_ENGINE_IDLE_TIMEOUT=1s") // the engine the host spawns ends soon after it
	ctx, cancel := context.WithTimeout(context.Background(), answerWithin)
	defer cancel()
	add := exec.CommandContext(ctx, bin, "plugin", "add", plugin)
	add.Env = env
	if out, err := add.CombinedOutput(); err != nil {
		os.RemoveAll(root)
		t.Fatalf("sdktest: ai-memory plugin add %s: %v\n%s", plugin, err, out)
	}
	h.cmd = exec.Command(bin, "mcp", "--profile", profile)
	h.cmd.Env = env
	h.cmd.Stderr = t.Output()
	stdin, _ := h.cmd.StdinPipe()
	stdout, _ := h.cmd.StdoutPipe()
	if err := h.cmd.Start(); err != nil {
		os.RemoveAll(root)
		t.Fatalf("sdktest: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close() // the host exits at the end of its input; its engine after its idle time
		done := make(chan struct{})
		go func() { h.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			h.cmd.Process.Signal(syscall.SIGKILL)
			<-done
		}
		waitEngineGone(h.DataDir)
		os.RemoveAll(root)
	})
	h.in = json.NewEncoder(stdin)
	h.out = bufio.NewScanner(stdout)
	h.out.Buffer(make([]byte, 1<<20), 16<<20)
	h.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "sdktest", "version": "1"}})
	h.in.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return h
}

// waitEngineGone waits (up to 10 s) until no engine holds the data dir's
// lock: the engine a host spawned exits after its idle time.
func waitEngineGone(dataDir string) {
	f, err := os.Open(filepath.Join(dataDir, "engine.lock"))
	if err != nil {
		return
	}
	defer f.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return
		}
	}
}

// answerWithin bounds the wait for the host's answer: a host that never
// answers fails the test instead of hanging it.
const answerWithin = time.Minute

// request sends one JSON-RPC request and returns its result, skipping the
// host's notifications.
func (h *Host) request(method string, params any) json.RawMessage {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	if err := h.in.Encode(map[string]any{"jsonrpc": "2.0", "id": h.nextID, "method": method, "params": params}); err != nil {
		h.t.Fatalf("sdktest: %s: %v", method, err)
	}
	type answer struct {
		result json.RawMessage
		err    string
	}
	id, got := h.nextID, make(chan answer, 1)
	go func() { // reads apart, so that the wait has a deadline
		for h.out.Scan() {
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(h.out.Bytes(), &msg) != nil || msg.ID == nil || *msg.ID != id {
				continue // a notification, or a request of the host's
			}
			if msg.Error != nil {
				got <- answer{err: msg.Error.Message}
			} else {
				got <- answer{result: msg.Result}
			}
			return
		}
		got <- answer{err: fmt.Sprintf("the host closed its output (%v)", h.out.Err())}
	}()
	select {
	case a := <-got:
		if a.err != "" {
			h.t.Fatalf("sdktest: %s: %s", method, a.err)
		}
		return a.result
	case <-time.After(answerWithin):
		h.cmd.Process.Kill() // ends the read above; the host is of no further use
		h.t.Fatalf("sdktest: %s: no answer within %v", method, answerWithin)
		return nil
	}
}

// Tools lists the names tools/list shows.
func (h *Host) Tools() []string {
	h.t.Helper()
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	json.Unmarshal(h.request("tools/list", map[string]any{}), &res)
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names
}

// Call runs a tool through the host and returns its text and isError.
func (h *Host) Call(tool string, args any) (string, bool) {
	h.t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(h.request("tools/call", map[string]any{"name": tool, "arguments": args}), &res); err != nil {
		h.t.Fatalf("sdktest: %s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.IsError
}
