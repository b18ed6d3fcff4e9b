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
)

// rawSession speaks JSON-RPC lines to a host directly, for checks of the
// exact wire shape (error codes) that a client library would hide.
type rawSession struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
	// lastRaw is the exact bytes of the last response line.
	lastRaw []byte
}

func (e *env) startRaw(args ...string) *rawSession {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(e.binDir, "ai-memory"), append([]string{"mcp"}, args...)...)
	cmd.Env = e.environ()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	s := &rawSession{t: e.t, cmd: cmd, in: in, out: bufio.NewReader(out)}
	e.t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	s.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

func (s *rawSession) send(msg any) {
	b, _ := json.Marshal(msg)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatal(err)
	}
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

// requestRaw sends a request whose params are the exact bytes given (which
// a JSON encoder might not produce, such as invalid UTF-8).
func (s *rawSession) requestRaw(method, params string) map[string]any {
	s.t.Helper()
	s.nextID++
	id := s.nextID
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	if _, err := io.WriteString(s.in, line); err != nil {
		s.t.Fatal(err)
	}
	type result struct {
		msg map[string]any
		raw []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		for {
			line, err := s.out.ReadBytes('\n')
			if err != nil {
				ch <- result{err: err}
				return
			}
			var msg map[string]any
			if err := json.Unmarshal(line, &msg); err != nil {
				ch <- result{err: err}
				return
			}
			if v, ok := msg["id"].(float64); ok && int(v) == id {
				ch <- result{msg: msg, raw: line}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			s.t.Fatalf("%s: %v", method, r.err)
		}
		s.lastRaw = r.raw
		return r.msg
	case <-time.After(30 * time.Second):
		s.t.Fatalf("%s: no response", method)
		return nil
	}
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
	if !isErr || !contains(text, "other family", `memory_capabilities {"family":"other","include_schema":true}`, "--profile core,other") {
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
