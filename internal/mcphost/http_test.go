package mcphost

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
)

func TestAnswerCall(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	ctx := context.Background()
	call := func(name, extra string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":{}` + extra + `}}`
	}
	text := func(m mcp.JSONRPCMessage) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, tc := range []struct {
		what, msg string
		ok        bool
		want      string
	}{
		{"unloaded family", call("test_echo", ""), true, `"isError":true`},
		{"unloaded family, 2026-07-28", call("test_echo", `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), true, "echo family"},
		{"unknown tool", call("no_such_tool", ""), true, "-32602"},
		{"registered tool", call("memory_store", ""), true, `\"tool\":\"memory_store\"`},
		{"registered tool, 2026-07-28", call("memory_store", `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), false, ""},
		{"memory_capabilities", call("memory_capabilities", ""), false, ""},
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false, ""},
		{"a batch", `[` + call("memory_store", "") + `]`, false, ""},
	} {
		msg, ok := h.AnswerCall(ctx, []byte(tc.msg))
		if ok != tc.ok || (ok && !strings.Contains(text(msg), tc.want)) {
			t.Errorf("%s: ok=%v %s, want ok=%v containing %s", tc.what, ok, text(msg), tc.ok, tc.want)
		}
	}
}

// An HTTP principal's namespace prefixes go with each call's caller (which
// the supervisor signs into its assertion), and its attestation level goes
// into each audit record.
func TestScopeAndAttestationReachAssertionAndAudit(t *testing.T) {
	p := &fakePlugins{}
	h, audit := newTestHost(t, p, withAllowlist(t, map[string][]string{"tester": {"core"}}), func(o *Options) {
		o.Scope, o.Attestation = []string{"team-a", "shared/"}, "mtls"
	})
	if msg, ok := h.AnswerCall(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_store","arguments":{}}}`)); !ok || msg == nil {
		t.Fatal("no answer")
	}
	p.mu.Lock()
	seen := p.callers
	p.mu.Unlock()
	if len(seen) != 1 || seen[0] != (caller.Caller{Principal: "tester", Session: "s1", Family: "core", Scope: "team-a shared/"}) {
		t.Fatalf("calls were for %+v", seen)
	}
	h.AnswerCall(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{}}}`))
	got := audit.all()
	if len(got) != 1 || got[0].Event != "call_denied" || got[0].Attestation != "mtls" {
		t.Fatalf("audit %+v", got)
	}
}
