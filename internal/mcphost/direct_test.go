package mcphost

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The direct path's answer decodes to what mcp-go's own encoding of the
// same result decodes to, whatever bytes the plugin sent.
func TestDirectAnswerMatchesMCPGo(t *testing.T) {
	texts := []string{"", `{"id":"a","title":"<b> & \"q\" \\ x"}`, "line\nbreak\r\ttab\x00\x1f\x7f",
		"caf\xc3\xa9 \xe2\x80\xa8 \xe2\x80\xa9 \xf0\x9f\x98\x80", "bad \xff\xfe utf8 \xc3", strings.Repeat("é", 3000)}
	for _, text := range texts {
		for _, isErr := range []bool{false, true} {
			for _, id := range []string{`7`, `"req-1"`, `-2.5`} {
				mine := toolAnswerLine(json.RawMessage(id), answer{text: []byte(text), isError: isErr})
				var want mcp.JSONRPCMessage = mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(json.RawMessage(id)), Result: answer{text: []byte(text), isError: isErr}.result()}
				ref, err := json.Marshal(want)
				if err != nil {
					t.Fatal(err)
				}
				var got, exp any
				if err := json.Unmarshal(mine, &got); err != nil {
					t.Fatalf("direct answer is not JSON: %v\n%q", err, mine)
				}
				json.Unmarshal(ref, &exp)
				if !reflect.DeepEqual(got, exp) {
					t.Errorf("text %q id %s: direct %s, mcp-go %s", text, id, mine, ref)
				}
				if strings.ContainsAny(string(mine), "\n\r") {
					t.Errorf("direct answer breaks the line: %q", mine)
				}
			}
		}
	}
}

func TestDirectArgumentsMustBeAnObject(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	p := startPipe(t, h)
	for i, args := range []string{`[1]`, `"x"`, `3`} {
		p.write(call(i, "memory_get", args))
		text, isErr := resultText(t, p.response(i))
		if !isErr || text != "arguments: must be a JSON object" {
			t.Errorf("arguments %s: %q %v", args, text, isErr)
		}
	}
	p.write(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"memory_get"}}` + "\n")
	if text, isErr := resultText(t, p.response(9)); isErr || !strings.Contains(text, `"args":{}`) {
		t.Errorf("absent arguments: %q %v", text, isErr)
	}
}

// notifications/cancelled reaches a call on the direct path.
func TestDirectCallIsCancelled(t *testing.T) {
	started := make(chan struct{})
	h, _ := newTestHost(t, nil, func(o *Options) { o.Plugins = &waitingPlugins{fakePlugins: &fakePlugins{}, started: started} })
	p := startPipe(t, h)
	p.write(call("slow", "memory_store", `{}`))
	testwait.Recv(t, started, "the call to reach the plugin")
	p.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}` + "\n")
	text, isErr := resultText(t, p.response("slow"))
	if !isErr || !strings.Contains(text, "context canceled") {
		t.Fatalf("cancelled call answered %q %v", text, isErr)
	}
}

// waitingPlugins' calls wait for their context to end.
type waitingPlugins struct {
	*fakePlugins
	started chan struct{}
}

func (w *waitingPlugins) Call(ctx context.Context, _ caller.Caller, _ string, _ []byte, _ *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error) {
	close(w.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// BenchmarkToolAnswerLine encodes a memory_get answer (about 1 KB of JSON
// text, every quote of which the line escapes).
func BenchmarkToolAnswerLine(b *testing.B) {
	text := []byte(`{"id":"0b6f3c2e-6f1d-4c1e-9a7e-2d1f0c9b8a71","title":"note 17 on release","content":"release deploy socket note 17 about token and engine","tier":"mid","namespace":"global","tags":["a","b"],"priority":5,"confidence":1,"source":"api","access_count":3,"created_at":"2026-12-01T18:54:43Z","updated_at":"2026-12-01T18:54:43Z","last_accessed_at":"2026-12-01T18:55:01Z","metadata":{"agent_id":"ai:bench","scope":"private"},"links":[{"source_id":"0b6f3c2e-6f1d-4c1e-9a7e-2d1f0c9b8a71","target_id":"1c7f4d3f-7a2e-4d2f-8b8f-3e2a1d0c9b82","relation":"related_to","created_at":"2026-12-01T18:54:44Z"}]}`)
	a := answer{text: text}
	b.ReportAllocs()
	for b.Loop() {
		toolAnswerLine(json.RawMessage(`17`), a)
	}
}
