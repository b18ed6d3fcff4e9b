package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/testwait"
)

// rawSession speaks JSON-RPC lines to a host directly, for checks of the
// exact wire shape (error codes) that a client library would hide.
type rawSession struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr *syncBuffer
	msgs   chan rawMsg
	early  map[string]rawMsg // answers read while waiting for another
	nextID int
	// lastRaw is the exact bytes of the last response line.
	lastRaw []byte
	exited  chan struct{} // closed once the process is waited for
}

type rawMsg struct {
	msg map[string]any
	raw []byte
}

func (e *env) startRaw(args ...string) *rawSession {
	e.t.Helper()
	s := e.spawnRaw(args...)
	s.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

// spawnRaw starts the host without initializing a session.
func (e *env) spawnRaw(args ...string) *rawSession {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(e.binDir, "ai-memory"), append([]string{"mcp"}, args...)...)
	cmd.Env = e.environ()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	s := &rawSession{t: e.t, cmd: cmd, in: in, stderr: &syncBuffer{}, msgs: make(chan rawMsg, 64), early: map[string]rawMsg{}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(s.msgs)
				cmd.Wait()
				close(s.exited)
				return
			}
			var msg map[string]any
			if err := json.Unmarshal(line, &msg); err != nil {
				e.t.Errorf("host wrote a line that is not JSON: %.200q", line)
				continue
			}
			s.msgs <- rawMsg{msg: msg, raw: line}
		}
	}()
	e.t.Cleanup(s.kill)
	return s
}

// kill ends the host and returns once the reader above has waited for it.
// Only that reader calls cmd.Wait: two Waits at once both pass its
// already-called check, and the second then blocks for ever on the
// output copier's one result.
func (s *rawSession) kill() {
	s.in.Close()
	s.cmd.Process.Kill()
	testwait.Recv(s.t, s.exited, "the killed host's output to close")
}

func (s *rawSession) send(msg any) {
	b, _ := json.Marshal(msg)
	s.write(string(b) + "\n")
}

// write sends raw bytes, as many lines as they hold, in one write.
func (s *rawSession) write(raw string) {
	s.t.Helper()
	if err := s.tryWrite(raw); err != nil {
		s.t.Fatal(err)
	}
}

func (s *rawSession) tryWrite(raw string) error {
	if _, err := io.WriteString(s.in, raw); err != nil {
		return fmt.Errorf("write to host: %v\nstderr:\n%s", err, s.stderr.String())
	}
	return nil
}

// request sends a request and returns its response, skipping notifications.
func (s *rawSession) request(method string, params any) map[string]any {
	s.t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.requestRaw(method, string(raw))
}

// tryRequest is request for a goroutine other than the test's (which
// must not call t.Fatal): it returns the failure instead.
func (s *rawSession) tryRequest(method string, params any) (map[string]any, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return s.tryRequestRaw(method, string(raw))
}

// requestRaw sends a request whose params are the exact bytes given (which
// a JSON encoder might not produce, such as invalid UTF-8).
func (s *rawSession) requestRaw(method, params string) map[string]any {
	s.t.Helper()
	m, err := s.tryRequestRaw(method, params)
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

func (s *rawSession) tryRequestRaw(method, params string) (map[string]any, error) {
	s.nextID++
	id := s.nextID
	if err := s.tryWrite(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)); err != nil {
		return nil, err
	}
	return s.awaitResponse(id)
}

// responseTo returns the answer to id (a string, a number or nil for a null
// id), keeping other answers for later and skipping notifications.
func (s *rawSession) responseTo(id any) map[string]any {
	s.t.Helper()
	m, err := s.awaitResponse(id)
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// awaitResponse is responseTo returning its failure.
func (s *rawSession) awaitResponse(id any) (map[string]any, error) {
	key, _ := json.Marshal(id)
	if m, ok := s.early[string(key)]; ok {
		delete(s.early, string(key))
		s.lastRaw = m.raw
		return m.msg, nil
	}
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				return nil, fmt.Errorf("host closed stdout before answering %s\nstderr:\n%s", key, s.stderr.String())
			}
			if _, note := m.msg["method"]; note {
				continue
			}
			got, _ := json.Marshal(m.msg["id"])
			if string(got) == string(key) {
				s.lastRaw = m.raw
				return m.msg, nil
			}
			s.early[string(got)] = m
		case <-timeout:
			return nil, fmt.Errorf("no answer to %s\nstderr:\n%s", key, s.stderr.String())
		}
	}
}

// callLine is one tools/call request line.
func callLine(id any, tool string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b) + "\n"
}

func TestWireErrors(t *testing.T) {
	s := newEnv(t).startRaw()

	// An unknown tool is a JSON-RPC error -32602, as the MCP specification says.
	resp := s.request("tools/call", map[string]any{"name": "memory_nope", "arguments": map[string]any{}})
	errObj, _ := resp["error"].(map[string]any)
	if errObj == nil || errObj["code"] != float64(-32602) {
		t.Fatalf("unknown tool: got %v, want JSON-RPC error -32602", resp)
	}

	// A tool of an installed family that is not loaded: an isError result
	// naming the family and both ways to load it.
	resp = s.request("tools/call", map[string]any{"name": "test_echo", "arguments": map[string]any{}})
	text, isErr := toolResult(resp)
	if !isErr || !contains(text, "echo family", `memory_capabilities {"family":"echo","include_schema":true}`, "--profile core,echo") {
		t.Fatalf("unloaded family: got %v", resp)
	}

	// A tool of the contract whose family has no installed plugin yet.
	resp = s.request("tools/call", map[string]any{"name": "memory_update", "arguments": map[string]any{}})
	text, isErr = toolResult(resp)
	if !isErr || !contains(text, "lifecycle family") {
		t.Fatalf("uninstalled family: got %v", resp)
	}

	// Arguments that are not an object are a clear tool error.
	resp = s.request("tools/call", map[string]any{"name": "memory_get", "arguments": []int{1}})
	if text, isErr = toolResult(resp); !isErr || !contains(text, "arguments", "must be a JSON object") {
		t.Fatalf("array arguments: got %v, want an isError result saying they must be a JSON object", resp)
	}
}

func toolResult(resp map[string]any) (string, bool) {
	res, _ := resp["result"].(map[string]any)
	if res == nil {
		return "", false
	}
	isErr, _ := res["isError"].(bool)
	content, _ := res["content"].([]any)
	text := ""
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			text += s
		}
	}
	return text, isErr
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
