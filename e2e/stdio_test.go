package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// maxMessage is the host's default [mcp] max_message_bytes.
const maxMessage = 1 << 20

// rssKiB is a process's resident set size.
func rssKiB(t testing.TB, pid int) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// escaped writes s with every byte as a \u00XX escape: six bytes a byte,
// the most JSON escaping can cost.
func escaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\u%04x`, s[i])
	}
	return b.String()
}

func TestStdioBoundedMessages(t *testing.T) {
	s := newEnv(t).startRaw()
	pid := s.cmd.Process.Pid
	store := func(id any, title string) {
		if text, isErr := toolResult(s.request("tools/call", map[string]any{"name": "memory_store", "arguments": map[string]any{"title": title, "content": "warm"}})); isErr {
			t.Fatalf("store: %s", text)
		}
	}
	for i := range 5 {
		store(i, fmt.Sprintf("warm-up %d", i))
	}
	base := rssKiB(t, pid)

	// The largest valid request, fully escaped, fits: 64 KiB of content and
	// 64 KiB of metadata, every byte written as \u00XX.
	content := strings.Repeat("a", 65536)
	meta := strings.Repeat("m", 65536-len(`{"k":""}`)-64) // room for the agent_id the plugin stamps in
	line := `{"jsonrpc":"2.0","id":"largest","method":"tools/call","params":{"name":"memory_store","arguments":{"title":"largest valid","content":"` +
		escaped(content) + `","metadata":{"k":"` + escaped(meta) + `"}}}}` + "\n"
	if len(line) > maxMessage {
		t.Fatalf("the largest valid request is %d bytes, over the default limit", len(line))
	}
	s.write(line)
	if text, isErr := toolResult(s.responseTo("largest")); isErr {
		t.Fatalf("largest valid request (%d bytes): %s", len(line), text)
	}

	// A message of exactly the limit reaches its tool, and an oversized
	// field gets the field's own error, not a transport error.
	head := `{"jsonrpc":"2.0","id":"max","method":"tools/call","params":{"name":"memory_store","arguments":{"title":"t","content":"`
	tail := `"}}}`
	s.write(head + strings.Repeat("x", maxMessage-len(head)-len(tail)) + tail + "\n")
	if text, isErr := toolResult(s.responseTo("max")); !isErr || !strings.Contains(text, "content: must be at most 65536 bytes") {
		t.Fatalf("maximum-size message: %.300s", text)
	}
	afterMax := rssKiB(t, pid)

	// A 50 MB line: a JSON-RPC error naming the limit, with the request's id.
	big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"memory_store","arguments":{"title":"t","content":"` +
		strings.Repeat("y", 50<<20) + `"}}}` + "\n"
	s.write(big)
	resp := s.responseTo("big")
	e, _ := resp["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32600) || !contains(e["message"].(string), "over the limit of 1048576 bytes", "max_message_bytes") {
		t.Fatalf("50 MB line: %v", resp)
	}
	if len(s.lastRaw) > 400 {
		t.Errorf("the answer to a 50 MB line is %d bytes", len(s.lastRaw))
	}
	after50 := rssKiB(t, pid)

	// The TypeScript SDK puts the id last; that is found too.
	s.write(`{"method":"tools/call","params":{"name":"memory_store","arguments":{"content":"` + strings.Repeat("z", 2*maxMessage) + `"}},"jsonrpc":"2.0","id":77}` + "\n")
	if e, _ := s.responseTo(77)["error"].(map[string]any); e == nil || e["code"] != float64(-32600) {
		t.Fatalf("oversized line with its id last: %v", e)
	}

	// The host keeps serving.
	store("after", "after the big line")
	t.Logf("host RSS: baseline %d KiB; after a maximum-size message %d KiB (%+d); after a 50 MB line %d KiB (%+d)",
		base, afterMax, afterMax-base, after50, after50-base)
	// The host returns what an oversized line made it grow (it kept 464 MB of a 50 MB line for good).
	if after50-base > 8<<10 {
		t.Errorf("host RSS grew by %d KiB after a 50 MB line (baseline %d KiB)", after50-base, base)
	}
}

func TestStdioGarbageLines(t *testing.T) {
	s := newEnv(t).startRaw()
	for _, c := range []struct {
		line string
		id   any
		code float64
	}{
		{"not json at all", nil, -32700},
		{`{"jsonrpc":"2.0","id":5,"method":`, nil, -32700},
		{"\x00\xff\xfe\x01", nil, -32700},
		{`{"jsonrpc":"2.0","id":"typed","method":"tools/call","params":{"name":7}}`, "typed", -32600},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, -32600},
		{`42`, nil, -32600},
		{`null`, nil, -32600},
		{`{"jsonrpc":"2.0","id":"no-method"}`, "no-method", -32600},
		{`{"jsonrpc":"2.0","id":"nope","method":"no/such/method"}`, "nope", -32601},
	} {
		s.write(c.line + "\n")
		resp := s.responseTo(c.id)
		if e, _ := resp["error"].(map[string]any); e == nil || e["code"] != c.code {
			t.Errorf("%q: got %v, want error %v", c.line, resp, c.code)
		}
	}
	s.write("\n \r\n\t\n") // blank lines are skipped without an answer
	if text, isErr := toolResult(s.request("tools/call", map[string]any{"name": "memory_store", "arguments": map[string]any{"title": "after garbage", "content": "still serving"}})); isErr {
		t.Fatalf("after garbage: %s", text)
	}
}

func TestStdioMethodNamesAreJSON(t *testing.T) {
	s := newEnv(t).startRaw()
	// "tools\/call" is tools/call: the router answers an unloaded family's tool.
	s.write(`{"jsonrpc":"2.0","id":"esc","method":"tools\/call","params":{"name":"test\u005fecho","arguments":{}}}` + "\n")
	text, isErr := toolResult(s.responseTo("esc"))
	if !isErr || !contains(text, "test_echo belongs to the echo family", `"family":"echo","include_schema":true`) {
		t.Fatalf("escaped tools/call: %q", text)
	}
	s.write(`{"jsonrpc":"2.0","id":"list","method":"tools\u002flist","params":{}}` + "\n")
	if resp := s.responseTo("list"); resp["result"] == nil {
		t.Fatalf("escaped tools/list: %v", resp)
	}
	s.write(`{"jsonrpc":"2.0","id":"store","method":"tools\/call","params":{"name":"memory\u005fstore","arguments":{"title":"esc","content":"c"}}}` + "\n")
	if text, isErr := toolResult(s.responseTo("store")); isErr {
		t.Fatalf("escaped call of a loaded tool: %s", text)
	}
}

// The host ends on SIGTERM and SIGINT even while stdin stays open, and its
// plugins go with it.
func TestStdioSignalsEndTheHostWithStdinOpen(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			s := newEnv(t).startRaw()
			if text, isErr := toolResult(s.request("tools/call", map[string]any{"name": "memory_store", "arguments": map[string]any{"title": "before " + sig.String(), "content": "c"}})); isErr {
				t.Fatal(text)
			}
			plugins := childrenOf(s.cmd.Process.Pid, "ai-memory-core")
			if len(plugins) != 1 {
				t.Fatalf("core plugins: %v", plugins)
			}
			start := time.Now()
			if err := s.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-s.exited: // stdin is still open: s.in was never closed
			case <-time.After(15 * time.Second):
				t.Fatalf("host still running 15 s after %s with stdin open\nstderr:\n%s", sig, s.stderr.String())
			}
			t.Logf("host exited %v after %s, state %v", time.Since(start).Round(time.Millisecond), sig, s.cmd.ProcessState)
			eventually(t, 5*time.Second, "the core plugin to exit with its host", func() bool {
				return len(processesMentioning(fmt.Sprint(plugins[0]))) == 0 && syscall.Kill(plugins[0], 0) != nil
			})
		})
	}
}

func TestStdioExpansionThenCallBackToBack(t *testing.T) {
	s := newEnv(t).startRaw()
	// An expansion and a call of the tool it grants, in one write.
	s.write(callLine("expand", "memory_capabilities", map[string]any{"family": "echo", "include_schema": true}) +
		callLine("call", "test_echo", map[string]any{"say": "right after"}))
	if text, isErr := toolResult(s.responseTo("expand")); isErr {
		t.Fatalf("expansion: %s", text)
	}
	if text, isErr := toolResult(s.responseTo("call")); isErr || !contains(text, `"say":"right after"`) {
		t.Fatalf("call sent right after the expansion: %q", text)
	}
	// A bridged call runs its tool without putting its family on the
	// surface: a direct call sent right after it is answered with how to
	// load the family, not run.
	s.write(callLine("bridge", "memory_capabilities", map[string]any{"tool": "memory_get_taxonomy", "arguments": map[string]any{}}) +
		callLine("direct", "memory_get_taxonomy", map[string]any{}))
	if text, isErr := toolResult(s.responseTo("bridge")); isErr {
		t.Fatalf("bridged first use: %s", text)
	}
	if text, isErr := toolResult(s.responseTo("direct")); !isErr || !contains(text, `"include_schema":true`) {
		t.Fatalf("direct call after a bridged call: error %v, %q", isErr, text)
	}
}
