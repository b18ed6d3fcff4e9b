package mcphost

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/guard"
	"github.com/ai-memory/ai-memory/internal/testwait"
)

func capabilitiesCall(t *testing.T, h *Host, args string) (string, bool) {
	t.Helper()
	resp := h.HandleMessage(context.Background(), json.RawMessage(call(1, capabilitiesName, args)))
	raw, _ := json.Marshal(resp)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return resultText(t, m)
}

func TestRouterAnswersCallsOfUnloadedFamilies(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	for _, c := range []struct{ tool, want string }{
		{"test_echo", "test_echo belongs to the echo family, which is not loaded in this session"},
		{"memory_update", "memory_update belongs to the lifecycle family, which no installed plugin provides yet"},
	} {
		resp := h.HandleMessage(context.Background(), json.RawMessage(call(7, c.tool, `{}`)))
		res, ok := resp.(mcp.JSONRPCResponse)
		if !ok {
			t.Fatalf("%s: %T %v", c.tool, resp, resp)
		}
		r := res.Result.(*mcp.CallToolResult)
		text := r.Content[0].(mcp.TextContent).Text
		if !r.IsError || !strings.Contains(text, c.want) {
			t.Errorf("%s: %q", c.tool, text)
		}
	}
	// An unknown tool is mcp-go's JSON-RPC -32602.
	resp := h.HandleMessage(context.Background(), json.RawMessage(call(8, "memory_nope", `{}`)))
	if e, ok := resp.(mcp.JSONRPCError); !ok || e.Error.Code != mcp.INVALID_PARAMS {
		t.Fatalf("unknown tool: %#v", resp)
	}
}

func TestBridgeGrantsOnFirstUse(t *testing.T) {
	p := &fakePlugins{}
	h, audit := newTestHost(t, p)
	text, isErr := capabilitiesCall(t, h, `{"tool":"test_echo","arguments":{"say":"hi"}}`)
	if isErr || !strings.Contains(text, `"say":"hi"`) {
		t.Fatalf("bridged call without expansion: %q", text)
	}
	if !h.isGranted("echo") || h.isLoaded("echo") {
		t.Errorf("after a bridged call: granted %v, loaded %v; want granted, not loaded", h.isGranted("echo"), h.isLoaded("echo"))
	}
	if _, listed := h.srv.ListTools()["test_echo"]; listed {
		t.Error("the bridge registered the family's tools")
	}
	e := audit.all()
	if len(e) != 1 || e[0].Event != "capability_expansion" || !e[0].Granted || e[0].Family != "echo" {
		t.Fatalf("audit = %+v", e)
	}
	// Granted once: later bridged calls are not expansions.
	capabilitiesCall(t, h, `{"tool":"test_echo"}`)
	if len(audit.all()) != 1 {
		t.Errorf("second bridged call audited again: %+v", audit.all())
	}
	if _, isErr := capabilitiesCall(t, h, `{"tool":"memory_capabilities"}`); !isErr {
		t.Error("the bridge ran itself")
	}
	if text, _ := capabilitiesCall(t, h, `{"tool":"`+strings.Repeat("q", 10000)+`"}`); len(text) > 200 || !strings.Contains(text, "(10000 bytes)") {
		t.Errorf("unknown tool error is %d bytes: %.100s", len(text), text)
	}
}

func TestBridgeDeniesAsBefore(t *testing.T) {
	h, audit := newTestHost(t, &fakePlugins{}, withAllowlist(t, map[string][]string{"tester": {"core"}}))
	text, isErr := capabilitiesCall(t, h, `{"tool":"test_echo","arguments":{}}`)
	direct, _ := h.unloadedToolMessage(context.Background(), "test_echo")
	if !isErr || text != direct || !strings.Contains(text, "not cleared for the echo family") {
		t.Fatalf("denied bridge = %q, direct call = %q", text, direct)
	}
	if h.isGranted("echo") {
		t.Fatal("a denied identity was granted")
	}
	// The bridged call and the direct one are each audited as denied.
	got := audit.all()
	if len(got) != 2 {
		t.Errorf("audit = %+v, want two denials", got)
	}
	for _, e := range got {
		if e.Event != "call_denied" || e.Granted {
			t.Errorf("audit entry %+v", e)
		}
	}
}

func TestBridgeGrantIsRateLimited(t *testing.T) {
	now := time.Unix(0, 0)
	h, audit := newTestHost(t, &fakePlugins{}, withAllowlist(t, map[string][]string{"tester": {"full"}}),
		func(o *Options) { o.RateLimit = guard.NewRateLimit(time.Hour, func() time.Time { return now }) })
	if _, isErr := capabilitiesCall(t, h, `{"tool":"test_echo"}`); isErr {
		t.Fatal("first grant refused")
	}
	text, isErr := capabilitiesCall(t, h, `{"tool":"test_echo2"}`)
	if !isErr || !strings.Contains(text, "one new family per 1h0m0s") {
		t.Fatalf("second new family at once: %q", text)
	}
	e := audit.all()
	if len(e) != 2 || e[1].Reason != "rate_limited" || e[1].Family != "echo2" {
		t.Fatalf("audit = %+v", e)
	}
}

// Grant and registration happen under one lock: whenever the lock is free,
// a family's tools are registered exactly if it counts as loaded.
func TestRegistrationMatchesGrant(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%2 == 0 {
					h.load("echo", false)
				} else {
					h.unload("echo")
				}
			}
		}()
	}
	for range 2000 {
		h.reg.Lock()
		_, registered := h.srv.ListTools()["test_echo"]
		loaded := h.loaded["echo"]
		h.reg.Unlock()
		if registered != loaded {
			close(stop)
			t.Fatalf("test_echo registered=%v while echo loaded=%v", registered, loaded)
		}
	}
	close(stop)
	testwait.Wait(t, &wg, "the loaders to stop")
}

func TestOverviewIsData(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	text, isErr := capabilitiesCall(t, h, `{}`)
	if isErr {
		t.Fatal(text)
	}
	var doc struct {
		Families struct {
			Families []familyRow `json:"families"`
		} `json:"families"`
	}
	json.Unmarshal([]byte(text), &doc)
	var names []string
	for _, r := range doc.Families.Families {
		names = append(names, r.Name)
		if slices.Contains(r.Tools, capabilitiesName) {
			t.Errorf("%s row lists the always-on tool", r.Name)
		}
		if r.Name == "meta" && r.ToolCount != 4 {
			t.Errorf("meta row = %+v", r)
		}
	}
	if !slices.Equal(names, testSet.Families()) || !slices.Contains(names, "echo") {
		t.Errorf("families = %v", names)
	}
}
