package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/guard"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The test host knows a first-party core family, a third-party echo family
// and a second third-party family, each served by a fake plugin.
var testFamilies = map[string][]string{
	"core":  {"memory_store", "memory_get"},
	"echo":  {"test_echo"},
	"echo2": {"test_echo2"},
}

var testSet = func() *catalog.Set {
	set, refused := catalog.NewSet([]catalog.Declaration{
		{Plugin: "core", FirstParty: true, Families: []catalog.DeclaredFamily{{Name: "core", Tools: testFamilies["core"]}}},
		{Plugin: "echo", Families: []catalog.DeclaredFamily{{Name: "echo", Tools: testFamilies["echo"]}}},
		{Plugin: "echo2", Families: []catalog.DeclaredFamily{{Name: "echo2", Tools: testFamilies["echo2"]}}},
	})
	if len(refused) > 0 {
		panic(fmt.Sprint(refused))
	}
	return set
}()

// testSchema is every test tool's input schema.
var testSchema = []byte(`{"type":"object","properties":{"limit":{"type":"integer","description":"How many"},"title":{"type":"string","description":"Title"}}}`)

// fakePlugins serves testFamilies; every call echoes its tool, arguments and
// context. start, when set, runs inside Start (tests block it to order events).
type fakePlugins struct {
	start   func(family string)
	mu      sync.Mutex
	calls   []string
	callers []caller.Caller // who each call was for
}

func (p *fakePlugins) Catalog() *catalog.Set { return testSet }

func (p *fakePlugins) Tools(family string) []*aimemoryv1.ToolDefinition {
	var out []*aimemoryv1.ToolDefinition
	for _, t := range testFamilies[family] {
		out = append(out, &aimemoryv1.ToolDefinition{Name: t, Description: "test tool", InputSchemaJson: testSchema})
	}
	return out
}

func (p *fakePlugins) Start(family string) error {
	if p.start != nil {
		p.start(family)
	}
	return nil
}

func (p *fakePlugins) Call(_ context.Context, who caller.Caller, tool string, args []byte, cc *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error) {
	p.mu.Lock()
	p.calls = append(p.calls, tool)
	p.callers = append(p.callers, who)
	p.mu.Unlock()
	out, _ := json.Marshal(map[string]any{"tool": tool, "family": who.Family, "args": json.RawMessage(args), "agent_id": cc.GetAgentId()})
	return &aimemoryv1.CallResponse{Text: out}, nil
}

// auditLog records audit entries in memory.
type auditLog struct {
	mu      sync.Mutex
	entries []AuditEntry
}

func (a *auditLog) Record(_ context.Context, e AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

func (a *auditLog) all() []AuditEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]AuditEntry(nil), a.entries...)
}

type hostOpt func(*Options)

func withAllowlist(t *testing.T, table map[string][]string) hostOpt {
	return func(o *Options) {
		a, err := guard.NewAllowlist(table, testSet)
		if err != nil {
			t.Fatal(err)
		}
		o.Allowlist = a
	}
}

func newTestHost(t *testing.T, p Plugins, opts ...hostOpt) (*Host, *auditLog) {
	t.Helper()
	ready := make(chan struct{})
	close(ready)
	profile, err := catalog.ParseProfile("core", testSet)
	if err != nil {
		t.Fatal(err)
	}
	audit := &auditLog{}
	o := Options{Version: "test", Profile: profile, AgentID: "tester", SessionID: "s1", Plugins: p, EngineReady: ready,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Audit: audit}
	for _, opt := range opts {
		opt(&o)
	}
	return New(o), audit
}
