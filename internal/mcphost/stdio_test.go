package mcphost

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// pipe is a client on the host's stdio front, over in-memory pipes.
type pipe struct {
	t      *testing.T
	in     *io.PipeWriter
	msgs   chan map[string]any
	early  map[string]map[string]any // answers read while waiting for another
	done   chan error
	cancel context.CancelFunc
}

func startPipe(t *testing.T, h *Host) *pipe {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pipe{t: t, in: inW, msgs: make(chan map[string]any, 100), early: map[string]map[string]any{}, done: make(chan error, 1), cancel: cancel}
	go func() { p.done <- h.ServeStdio(ctx, inR, outW); outW.Close() }()
	go func() {
		r := bufio.NewReader(outR)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				close(p.msgs)
				return
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Errorf("host wrote a line that is not JSON: %q", line)
			}
			p.msgs <- m
		}
	}()
	t.Cleanup(func() { inW.Close(); cancel(); testwait.Recv(t, p.done, "ServeStdio to return") })
	p.write(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	p.response("init")
	return p
}

func (p *pipe) write(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, s); err != nil {
		p.t.Fatal(err)
	}
}

// response returns the answer to id, keeping other answers for later
// and skipping notifications.
func (p *pipe) response(id any) map[string]any {
	p.t.Helper()
	want, _ := json.Marshal(id)
	if m, ok := p.early[string(want)]; ok {
		delete(p.early, string(want))
		return m
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.t.Fatalf("stdout closed before the answer to %s", want)
			}
			got, _ := json.Marshal(m["id"])
			if _, isNote := m["method"]; isNote {
				continue
			}
			if string(got) == string(want) {
				return m
			}
			p.early[string(got)] = m
		case <-timeout:
			p.t.Fatalf("no answer to %s", want)
		}
	}
}

func call(id any, tool string, args string) string {
	b, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", b, tool, args)
}

func resultText(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %v", m)
	}
	isErr, _ := res["isError"].(bool)
	var sb strings.Builder
	for _, c := range res["content"].([]any) {
		sb.WriteString(c.(map[string]any)["text"].(string))
	}
	return sb.String(), isErr
}

func errorOf(t *testing.T, m map[string]any) (int, string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error: %.300v", m)
	}
	return int(e["code"].(float64)), e["message"].(string)
}

func TestStdioOversizedLineIsAnsweredAndDropped(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	p := startPipe(t, h)
	big := strings.Repeat("x", 3*DefaultMaxMessageBytes)
	// The id before the params (Go, Python clients) and after them (TypeScript).
	p.write(`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"memory_store","arguments":{"content":"` + big + `"}}}` + "\n")
	code, msg := errorOf(t, p.response(41))
	if code != -32600 || !strings.Contains(msg, fmt.Sprintf("over the limit of %d bytes", DefaultMaxMessageBytes)) || !strings.Contains(msg, "max_message_bytes") {
		t.Fatalf("oversized line: %d %q", code, msg)
	}
	if len(msg) > 200 {
		t.Errorf("error message is %d bytes", len(msg))
	}
	p.write(`{"method":"tools/call","params":{"name":"memory_store","arguments":{"content":"` + big + `"}},"jsonrpc":"2.0","id":"ts-7"}` + "\n")
	if code, _ := errorOf(t, p.response("ts-7")); code != -32600 {
		t.Fatalf("id after params: code %d", code)
	}
	// Without a newline until the very end, and with no id to find: answered with a null id.
	p.write(`[` + big + "]\n")
	if code, _ := errorOf(t, p.response(nil)); code != -32600 {
		t.Fatalf("no id: code %d", code)
	}
	// A message of exactly the limit is read and reaches its tool.
	args := `{"content":"`
	line := call(42, "memory_store", args+`"}`)
	pad := DefaultMaxMessageBytes - (len(line) - 1)
	line = call(42, "memory_store", args+strings.Repeat("y", pad)+`"}`)
	if len(line)-1 != DefaultMaxMessageBytes {
		t.Fatalf("test line is %d bytes", len(line)-1)
	}
	p.write(line)
	if text, isErr := resultText(t, p.response(42)); isErr || !strings.Contains(text, `"tool":"memory_store"`) {
		t.Fatalf("message at the limit: %v %.200s", isErr, text)
	}
	// And the host keeps serving.
	p.write(call(43, "memory_get", `{}`))
	if _, isErr := resultText(t, p.response(43)); isErr {
		t.Fatal("host stopped serving after an oversized line")
	}
}

func TestStdioConfiguredLimit(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{}, func(o *Options) { o.MaxMessageBytes = 4096 })
	p := startPipe(t, h)
	p.write(call(1, "memory_store", `{"content":"`+strings.Repeat("z", 5000)+`"}`))
	if _, msg := errorOf(t, p.response(1)); !strings.Contains(msg, "limit of 4096 bytes") {
		t.Fatalf("configured limit: %q", msg)
	}
}

func TestStdioGarbageLines(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	p := startPipe(t, h)
	for _, c := range []struct {
		line string
		id   any
		code int
	}{
		{"not json at all", nil, -32700},
		{`{"jsonrpc":"2.0","id":5,"method":`, nil, -32700},
		{"\x00\xff\xfe", nil, -32700},
		{`[]`, nil, -32600},
		{`7`, nil, -32600},
		{`"tools/call"`, nil, -32600},
		{`null`, nil, -32600},
		{`{"jsonrpc":"2.0","id":9}`, 9, -32600},
		{`{"jsonrpc":"2.0","id":10,"method":"no/such"}`, 10, -32601},
		{`{"jsonrpc":"2.0","id":11,"method":7}`, 11, -32600},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":7}}`, 12, -32600},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":[1]}`, 13, -32600},
	} {
		p.write(c.line + "\n")
		if code, _ := errorOf(t, p.response(c.id)); code != c.code {
			t.Errorf("%q: code %d, want %d", c.line, code, c.code)
		}
	}
	// Nothing the client sent is echoed back whole.
	long := strings.Repeat("q", 100000)
	p.write(`{"jsonrpc":"2.0","id":"m","method":"` + long + `"}` + "\n" + call("t", long, `{}`))
	for _, id := range []string{"m", "t"} {
		if code, msg := errorOf(t, p.response(id)); len(msg) > 300 || !strings.Contains(msg, " bytes)") || code > -32601 {
			t.Errorf("%s: %d %d bytes: %.80s", id, code, len(msg), msg)
		}
	}
	p.write("\n   \r\n\t\n") // blank lines are skipped, not answered
	p.write(`{"jsonrpc":"2.0","id":"after","method":"ping"}` + "\n")
	if m := p.response("after"); m["result"] == nil {
		t.Fatalf("ping after garbage: %v", m)
	}
}

func TestStdioMethodNamesAreDecodedAsJSON(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	p := startPipe(t, h)
	// An escaped tools/call of an unloaded family's tool gets the router's answer.
	p.write(`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"test\u005fecho","arguments":{}}}` + "\n")
	text, isErr := resultText(t, p.response(1))
	if !isErr || !strings.Contains(text, "test_echo belongs to the echo family") || !strings.Contains(text, `"family":"echo","include_schema":true`) {
		t.Fatalf("escaped tools/call: %q", text)
	}
	p.write(`{"jsonrpc":"2.0","id":2,"method":"tools\u002flist"}` + "\n")
	if m := p.response(2); m["result"] == nil {
		t.Fatalf("escaped tools/list: %v", m)
	}
}

func TestStdioStopsPromptlyWhileStdinStaysOpen(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	inR, inW := io.Pipe() // never closed before the host returns
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ServeStdio(ctx, inR, io.Discard) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	cancel() // what SIGTERM does
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after its context was cancelled")
	}
}

func TestStdioEndOfInputWaitsForCallsInFlight(t *testing.T) {
	release := make(chan struct{})
	h, _ := newTestHost(t, &fakePlugins{start: func(f string) {
		if f != "core" {
			<-release
		}
	}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- h.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_capabilities","arguments":{"family":"echo","include_schema":true}}}`+"\n")
	inW.Close()
	close(release)
	scanned := make(chan bool, 1) // read apart, so the wait for the end of output has a deadline
	go func() {
		var answered bool
		for lines.Scan() {
			answered = answered || strings.Contains(lines.Text(), `"id":1`)
		}
		scanned <- answered
	}()
	answered := testwait.Recv(t, scanned, "the host to close its output")
	if err := testwait.Recv(t, done, "ServeStdio to return"); err != nil || !answered {
		t.Fatalf("after end of input: err=%v answered=%v", err, answered)
	}
}

func TestStdioExpansionThenCallBackToBack(t *testing.T) {
	entered, release := make(chan string, 4), make(chan struct{})
	h, _ := newTestHost(t, &fakePlugins{start: func(f string) {
		if f != "core" {
			entered <- f
			<-release
		}
	}})
	p := startPipe(t, h)
	// Expansion and a call of the tool it grants, in one write.
	p.write(call(1, "memory_capabilities", `{"family":"echo","include_schema":true}`) + call(2, "test_echo", `{"say":"hi"}`))
	if f := testwait.Recv(t, entered, "the expansion to start a plugin"); f != "echo" {
		t.Fatalf("started %s", f)
	}
	close(release) // the expansion finishes only now; the call must have waited
	if _, isErr := resultText(t, p.response(1)); isErr {
		t.Fatal("expansion failed")
	}
	if text, isErr := resultText(t, p.response(2)); isErr || !strings.Contains(text, `"say":"hi"`) {
		t.Fatalf("call sent right after the expansion: %q", text)
	}
	// A bridged call that grants, then a second bridged call, in one write.
	p.write(call(3, "memory_capabilities", `{"tool":"test_echo2","arguments":{"n":1}}`) + call(4, "memory_capabilities", `{"tool":"test_echo2","arguments":{"n":2}}`))
	if text, isErr := resultText(t, p.response(3)); isErr || !strings.Contains(text, `"n":1`) {
		t.Fatalf("bridged first use: %q", text)
	}
	if text, isErr := resultText(t, p.response(4)); isErr || !strings.Contains(text, `"n":2`) {
		t.Fatalf("second bridged call: %q", text)
	}
	// The bridge registered nothing: a direct call is still told how to load the family.
	p.write(call(5, "test_echo2", `{}`))
	if text, isErr := resultText(t, p.response(5)); !isErr || !strings.Contains(text, "not loaded") {
		t.Fatalf("direct call after bridged calls: %q", text)
	}
}

// next returns the next message the host wrote, notifications included.
func (p *pipe) next() map[string]any {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatal("stdout closed")
		}
		return m
	case <-time.After(30 * time.Second):
		p.t.Fatal("nothing written for 30 s")
	}
	return nil
}

// A client that re-lists on list_changed gets the new list, and is asked
// to list once more, before the expansion's answer: its next model request
// offers the new tools.
func TestStdioExpansionAnswersAfterTheNewList(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{}, func(o *Options) { o.RelistWait = time.Hour })
	p := startPipe(t, h)
	p.write(call(1, "memory_capabilities", `{"family":"echo","include_schema":true}`))
	if m := p.next(); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("first message after the expansion: %v", m)
	}
	// Held: a ping sent now is answered first.
	p.write(`{"jsonrpc":"2.0","id":"ping","method":"ping"}` + "\n")
	if m := p.next(); m["id"] != "ping" {
		t.Fatalf("expected the ping's answer while the expansion waits, got %.200v", m)
	}
	p.write(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}` + "\n")
	list := p.next()
	if list["id"] != "list" || !strings.Contains(fmt.Sprint(list["result"]), "test_echo") {
		t.Fatalf("expected the new list, got %.300v", list)
	}
	// Asked for, so marked always-load for clients that defer tools.
	for _, tool := range list["result"].(map[string]any)["tools"].([]any) {
		if m := tool.(map[string]any); m["name"] == "test_echo" && fmt.Sprint(m["_meta"]) != "map[anthropic/alwaysLoad:true]" {
			t.Errorf("expanded tool's _meta = %v", m["_meta"])
		}
	}
	// Then a second notification, whose list the answer also waits for.
	if m := p.next(); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("after the first list: %.200v", m)
	}
	p.write(`{"jsonrpc":"2.0","id":"ping2","method":"ping"}` + "\n")
	if m := p.next(); m["id"] != "ping2" {
		t.Fatalf("expected the ping's answer while the expansion waits, got %.200v", m)
	}
	p.write(`{"jsonrpc":"2.0","id":"list2","method":"tools/list"}` + "\n")
	if m := p.next(); m["id"] != "list2" {
		t.Fatalf("expected the second list, got %.200v", m)
	}
	text, isErr := resultText(t, p.next())
	if isErr || !strings.Contains(text, "test_echo") || !strings.Contains(text, bridgeHint[:20]) {
		t.Fatalf("expansion answer: %.300q", text)
	}
	// Loading it again changes nothing and answers at once.
	p.write(call(2, "memory_capabilities", `{"family":"echo","include_schema":true}`))
	if _, isErr := resultText(t, p.response(2)); isErr {
		t.Fatal("second load failed")
	}
}

// A client that never re-lists waits RelistWait once (and is not notified
// a second time); the session is then not waited for again until it lists.
func TestStdioExpansionWaitIsBoundedForClientsThatDoNotRelist(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{}, func(o *Options) { o.RelistWait = 50 * time.Millisecond })
	p := startPipe(t, h)
	p.write(call(1, "memory_capabilities", `{"family":"echo","include_schema":true}`))
	if _, isErr := resultText(t, p.response(1)); isErr {
		t.Fatal("expansion failed")
	}
	h.lists.mu.Lock()
	deaf := h.lists.get(stdioSessionID).deaf
	h.lists.mu.Unlock()
	if !deaf {
		t.Fatal("a wait that ran out did not mark the session")
	}
	// The next expansion is not held: with an hour's bound it still answers.
	h.opts.RelistWait = time.Hour
	p.write(call(2, "memory_capabilities", `{"family":"echo2","include_schema":true}`))
	if _, isErr := resultText(t, p.response(2)); isErr {
		t.Fatal("second expansion failed")
	}
	// Listing again makes the session one that re-lists.
	h.lists.mu.Lock()
	listed := h.lists.get(stdioSessionID).changed
	h.lists.mu.Unlock()
	p.write(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}` + "\n")
	p.response("list")
	testwait.Recv(t, listed, "the listing to be noted")
	h.lists.mu.Lock()
	deaf = h.lists.get(stdioSessionID).deaf
	h.lists.mu.Unlock()
	if deaf {
		t.Fatal("listing did not clear the mark")
	}
}

func TestStdioCallsStillRunConcurrently(t *testing.T) {
	// A call blocked in its plugin does not hold up the next one.
	block := make(chan struct{})
	h, _ := newTestHost(t, nil, func(o *Options) { o.Plugins = &blockingPlugins{fakePlugins: &fakePlugins{}, block: block} })
	p := startPipe(t, h)
	p.write(call(1, "memory_store", `{"block":true}`) + call(2, "memory_get", `{}`))
	if _, isErr := resultText(t, p.response(2)); isErr {
		t.Fatal("second call failed")
	}
	close(block)
	if _, isErr := resultText(t, p.response(1)); isErr {
		t.Fatal("blocked call failed")
	}
}

type blockingPlugins struct {
	*fakePlugins
	block chan struct{}
}

func (b *blockingPlugins) Call(ctx context.Context, who caller.Caller, tool string, args []byte, cc *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error) {
	if strings.Contains(string(args), "block") {
		<-b.block
	}
	return b.fakePlugins.Call(ctx, who, tool, args, cc)
}

// blockingAudit holds every audit append until released.
type blockingAudit struct{ release chan struct{} }

func (b blockingAudit) Record(context.Context, AuditEntry) error { <-b.release; return nil }

func TestStdioReaderNeverWaitsOnAudit(t *testing.T) {
	audit := blockingAudit{release: make(chan struct{})}
	h, _ := newTestHost(t, &fakePlugins{}, withAllowlist(t, map[string][]string{"tester": {"core"}}),
		func(o *Options) { o.Audit = audit })
	p := startPipe(t, h)
	// A denied call is audited; its append hangs. The next message is still read and answered.
	p.write(call(1, "test_echo", `{}`) + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")
	if m := p.response(2); m["result"] == nil {
		t.Fatalf("ping behind a blocked audit append: %v", m)
	}
	close(audit.release)
	if text, isErr := resultText(t, p.response(1)); !isErr || !strings.Contains(text, "not cleared") {
		t.Fatalf("denied call: %q", text)
	}
}
