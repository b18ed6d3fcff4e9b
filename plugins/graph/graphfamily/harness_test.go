package graphfamily

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
)

// harness calls the graph tools the way the host does: through the Family
// server, over a real engine on a temporary data dir.
type harness struct {
	t     *testing.T
	eng   aimemoryv1.EngineClient
	srv   aimemoryv1.FamilyServer
	agent string // the session identity the host resolved
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	eng := sdktest.StartEngine(t)
	srv, err := sdk.NewFamilyServer("graph", "test", Families(eng), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, eng: eng, srv: srv, agent: "ai:test"}
}

// call runs tool with JSON args and returns the result text and isError.
func (h *harness) call(tool, args string) (string, bool) {
	h.t.Helper()
	resp, err := h.srv.Call(context.Background(), &aimemoryv1.CallRequest{
		Tool:          tool,
		ArgumentsJson: []byte(args),
		Context:       &aimemoryv1.CallContext{AgentId: h.agent, SessionId: "s1", ClientName: "test"},
	})
	if err != nil {
		h.t.Fatalf("%s %s: transport error %v", tool, args, err)
	}
	return resp.GetText(), resp.GetIsError()
}

// ok runs a call that must succeed and decodes its JSON result into v.
func (h *harness) ok(tool, args string, v any) string {
	h.t.Helper()
	text, isErr := h.call(tool, args)
	if isErr {
		h.t.Fatalf("%s %s: %s", tool, args, text)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(text), v); err != nil {
			h.t.Fatalf("%s: result is not the expected JSON: %v\n%s", tool, err, text)
		}
	}
	return text
}

// fails runs a call that must be a tool error containing want.
func (h *harness) fails(tool, args, want string) {
	h.t.Helper()
	text, isErr := h.call(tool, args)
	if !isErr {
		h.t.Fatalf("%s %s: succeeded (%s); want error %q", tool, args, text, want)
	}
	if !strings.Contains(text, want) {
		h.t.Fatalf("%s %s: error %q; want it to contain %q", tool, args, text, want)
	}
}

// memory stores a memory directly in the engine and returns its id.
func (h *harness) memory(title, namespace string) string {
	h.t.Helper()
	resp, err := h.eng.StoreMemory(context.Background(), &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{Title: title, Content: "about " + title, Namespace: namespace, Confidence: 1},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetMemory().GetId()
}

func jsonArgs(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}
