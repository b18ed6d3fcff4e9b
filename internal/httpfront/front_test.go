package httpfront

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/mcphost"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var testSet = func() *catalog.Set {
	set, refused := catalog.NewSet([]catalog.Declaration{{Plugin: "core", FirstParty: true,
		Families: []catalog.DeclaredFamily{{Name: "core", Tools: []string{"memory_store"}}}}})
	if len(refused) > 0 {
		panic(fmt.Sprint(refused))
	}
	return set
}()

// testClient bounds each request: a front that never answers fails the
// test instead of hanging it.
var testClient = &http.Client{Timeout: testwait.Deadline}

// blockingPlugins holds every call until release is closed.
type blockingPlugins struct {
	echoPlugins
	entered chan string
	release chan struct{}
}

func (p *blockingPlugins) Catalog() *catalog.Set { return testSet }
func (p *blockingPlugins) Tools(string) []*aimemoryv1.ToolDefinition {
	return []*aimemoryv1.ToolDefinition{{Name: "memory_store", Description: "t", InputSchemaJson: []byte(`{"type":"object"}`)}}
}
func (p *blockingPlugins) Start(string) error { return nil }
func (p *blockingPlugins) Call(ctx context.Context, _ caller.Caller, _ string, _ []byte, cc *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error) {
	p.entered <- cc.GetAgentId()
	select {
	case <-p.release:
	case <-ctx.Done():
	}
	return &aimemoryv1.CallResponse{Text: []byte("ok " + cc.GetAgentId())}, nil
}

// headerAuth takes the principal from a test header.
type headerAuth struct{}

func (headerAuth) Authenticate(r *http.Request) (Principal, error) {
	return Principal{ID: r.Header.Get("X-Test-Principal"), Attestation: AttestToken}, nil
}

// A principal's requests beyond its cap wait, then get 429; another
// principal is not held up by them.
func TestConcurrencyCapIsPerPrincipal(t *testing.T) {
	plugins := &blockingPlugins{entered: make(chan string, 8), release: make(chan struct{})}
	profile, err := catalog.ParseProfile("core", testSet)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	close(ready)
	var hosts atomic.Int32
	f := New(Options{Auth: headerAuth{}, MaxConcurrent: 1, QueueWait: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		NewHost: func(p Principal) *mcphost.Host {
			hosts.Add(1)
			return mcphost.New(mcphost.Options{Profile: profile, AgentID: p.ID, Plugins: plugins, EngineReady: ready,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, l, 5*time.Second) }()
	url := "http://" + l.Addr().String() + "/mcp"
	call := func(principal string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_store","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Test-Principal", principal)
		resp, err := testClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	first := make(chan string, 1)
	go func() { code, body := call("alice"); first <- fmt.Sprint(code, " ", body) }()
	if who := testwait.Recv(t, plugins.entered, "alice's first call to reach the plugin"); who != "alice" {
		t.Fatalf("first call for %s", who)
	}
	if code, body := call("alice"); code != http.StatusTooManyRequests || !strings.Contains(body, "at most 1") {
		t.Errorf("alice's second call: %d %s", code, body)
	}
	bob := make(chan string, 1)
	go func() { code, body := call("bob"); bob <- fmt.Sprint(code, " ", body) }()
	if who := testwait.Recv(t, plugins.entered, "bob's call to reach the plugin"); who != "bob" {
		t.Fatalf("bob's call entered as %s", who)
	}
	close(plugins.release)
	if got := testwait.Recv(t, first, "alice's first call to answer"); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "ok alice") {
		t.Errorf("alice's first call: %s", got)
	}
	if got := testwait.Recv(t, bob, "bob's call to answer"); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "ok bob") {
		t.Errorf("bob's call: %s", got)
	}
	if hosts.Load() != 2 || f.Tenants() != 2 {
		t.Errorf("%d hosts for two principals", hosts.Load())
	}
	cancel()
	if err := testwait.Recv(t, served, "Serve to return"); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// A principal's open GET streams are capped: one more is refused at once.
func TestStreamCap(t *testing.T) {
	profile, _ := catalog.ParseProfile("core", testSet)
	ready := make(chan struct{})
	close(ready)
	plugins := &blockingPlugins{entered: make(chan string, 1), release: make(chan struct{})}
	f := New(Options{Auth: headerAuth{}, MaxConcurrent: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		NewHost: func(p Principal) *mcphost.Host {
			return mcphost.New(mcphost.Options{Profile: profile, AgentID: p.ID, Plugins: plugins, EngineReady: ready,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Serve(ctx, l, time.Second)
	url := "http://" + l.Addr().String() + "/mcp"
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Test-Principal", "alice")
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	stream := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		req.Header.Set("X-Test-Principal", "alice")
		resp, err := testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := stream()
	defer first.Body.Close()
	if first.StatusCode != 200 {
		t.Fatalf("first stream: %d", first.StatusCode)
	}
	second := stream()
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second stream: %d, want 429", second.StatusCode)
	}
}
