// Package mcphost is the MCP face of ai-memory: it registers the tools of
// the session's families with mcp-go, routes each call to the plugin that
// owns it with the resolved call context, and serves memory_capabilities.
// Everything it knows about particular families comes from the catalog and
// the plugins' own descriptions; it has no per-family code.
package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/guard"
	"github.com/ai-memory/ai-memory/internal/identity"
	"github.com/ai-memory/ai-memory/internal/metrics"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Plugins is what the host needs from the plugin supervisor.
type Plugins interface {
	// Catalog is the family set: the contract plus the installed plugins' families.
	Catalog() *catalog.Set
	Tools(family string) []*aimemoryv1.ToolDefinition
	Start(family string) error
	// Call runs a tool of who.Family for who; the supervisor signs who,
	// bound to the call and the plugin process serving it, into cc.Assertion.
	Call(ctx context.Context, who caller.Caller, tool string, args []byte, cc *aimemoryv1.CallContext) (*aimemoryv1.CallResponse, error)
}

// Options configure a Host.
type Options struct {
	Version   string
	Profile   catalog.Profile
	AgentID   string // --agent-id / AI_MEMORY_AGENT_ID, already validated; "" = derive
	SessionID string
	// DefaultNamespace goes to plugins with every call ("" = global).
	DefaultNamespace string
	Plugins          Plugins
	// EngineReady is closed once the engine answers; calls wait for it.
	EngineReady <-chan struct{}
	EngineErr   func() error // why the engine is not ready, once EngineReady is closed
	Logger      *slog.Logger
	// MaxMessageBytes bounds one message on the stdio front
	// (DefaultMaxMessageBytes if zero).
	MaxMessageBytes int
	// RelistWait bounds how long an expansion's answer waits for the
	// client to fetch the new tool list (DefaultRelistWait if zero; a
	// negative value does not wait). See relist.go.
	RelistWait time.Duration

	// Guardrails (zero values: no allowlist, no limit, full discovery, no audit).
	Allowlist         guard.Allowlist
	RateLimit         *guard.RateLimit
	RedactedDiscovery bool
	Audit             Auditor
	// AutoProfile logs profile suggestions (observe only).
	AutoProfile bool
	// Vectors reports the engine's embedding endpoint and vector coverage
	// for memory_capabilities (nil: reported as keyword only).
	Vectors func(context.Context) (*aimemoryv1.VectorStatusResponse, error)
	// Metrics counts tool calls by tool and outcome; nil counts nothing.
	Metrics *metrics.Host

	// The namespaces the session may use, signed into every call's
	// assertion so the engine enforces them (internal/engine/authz):
	// ["*"] (caller.AllNamespaces) alone is every namespace, which the CLI
	// grants stdio sessions explicitly; "=ns" is ns without what lies
	// below it; nil is none. For an HTTP principal they are its
	// credential's, and Attestation is how it was identified (token,
	// oauth, mtls), which audit records carry.
	Scope       []string
	Attestation string
}

// Host is one MCP server session over the plugins.
type Host struct {
	opts Options
	log  *slog.Logger
	srv  *server.MCPServer
	set  *catalog.Set

	mu         sync.Mutex // guards clientName
	clientName string

	// reg guards loaded, granted and tools, and is held while tools are
	// added or removed, so a family's tools are registered exactly while it
	// counts as loaded.
	reg    sync.Mutex
	loaded map[string]bool
	// granted families passed the expansion checks in this session; the
	// bridge runs their tools without registering them (loaded implies granted).
	granted map[string]bool
	tools   map[string]string // registered family tool → its family

	toolsVersion atomic.Uint64 // bumped at every registration change
	lists        listings      // what each session was last listed (relist.go)

	// inflight cancels the direct calls (see direct.go) by request id, for
	// notifications/cancelled.
	inflight sync.Map

	suggest suggestions

	scalars sync.Map // tool → its scalar properties, for untyped clients (clientschema.go)
}

// New builds the MCP server with the profile's families registered.
func New(opts Options) *Host {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &Host{opts: opts, log: opts.Logger, set: opts.Plugins.Catalog(), loaded: map[string]bool{}, granted: map[string]bool{}, tools: map[string]string{}, suggest: newSuggestions()}
	hooks := &server.Hooks{}
	hooks.AddAfterInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		h.learnClient(req.Params.ClientInfo.Name)
	})
	// Clients of protocol 2026-07-28 skip initialize and name themselves in
	// every request's _meta; mcp-go keeps that on the session.
	hooks.AddBeforeAny(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any) {
		if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
			h.learnClient(s.GetClientInfo().Name)
		}
	})
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		h.shapeList(ctx, res)
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { h.lists.forget(s.SessionID()) })
	h.srv = server.NewMCPServer("ai-memory", opts.Version,
		server.WithToolCapabilities(true),
		server.WithInstructions(catalog.Instructions),
		server.WithHooks(hooks),
		server.WithRecovery(),
		// Lists vary with the principal (HTTP) or the session's grants.
		server.WithCacheHints(0, mcp.CacheScopePrivate),
	)
	h.srv.AddTool(h.capabilitiesTool(), h.counted(h.capabilities))
	h.loadProfile()
	return h
}

// learnClient records the client's name (the source of the session
// identity) and applies the allowlist to the profile's families for it.
func (h *Host) learnClient(name string) {
	h.mu.Lock()
	changed := name != "" && name != h.clientName
	if changed {
		h.clientName = name
	}
	h.mu.Unlock()
	if changed && h.opts.Allowlist.Enabled() {
		h.loadProfile()
	}
}

// Server exposes the mcp-go server (for transports).
func (h *Host) Server() *server.MCPServer { return h.srv }

// isLoaded reports whether a family's tools are registered in this session.
func (h *Host) isLoaded(family string) bool {
	h.reg.Lock()
	defer h.reg.Unlock()
	return h.loaded[family]
}

// isGranted reports whether a family passed the expansion checks in this
// session (loaded, or granted through the bridge).
func (h *Host) isGranted(family string) bool {
	h.reg.Lock()
	defer h.reg.Unlock()
	return h.loaded[family] || h.granted[family]
}

// load grants a family to this session and registers its tools, under one
// lock (mcp-go then notifies clients with tools/list_changed). The plugin
// is started in the background so the first call finds it warm. A family
// loaded on request (include_schema) is marked always-load, so a client
// that defers tools (Claude Code's tool search) offers the tools the model
// asked for in its very next request; a profile's tools keep their
// plugin's choice.
func (h *Host) load(family string, requested bool) (err error) {
	defs := h.opts.Plugins.Tools(family)
	if len(defs) == 0 {
		return h.unavailable(family)
	}
	tools := make([]server.ServerTool, 0, len(defs))
	for _, d := range defs {
		t := wireTool(d)
		if requested {
			t.Meta = alwaysLoadMeta()
		}
		tools = append(tools, server.ServerTool{Tool: t, Handler: h.route(family)})
	}
	h.reg.Lock()
	defer h.reg.Unlock()
	if h.loaded[family] {
		return nil
	}
	// mcp-go panics on a malformed tool, before registering any of the
	// batch; a third-party plugin must not take the host down.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("family %s has a malformed tool definition: %v", family, r)
		}
	}()
	h.srv.AddTools(tools...)
	h.toolsVersion.Add(1)
	h.loaded[family] = true
	for _, d := range defs {
		h.tools[d.GetName()] = family
	}
	go func() {
		if err := h.opts.Plugins.Start(family); err != nil {
			h.log.Error("plugin start failed", "family", family, "err", err)
		}
	}()
	return nil
}

// inputSchema is the input schema tool of family declares (nil if none).
func (h *Host) inputSchema(family, tool string) json.RawMessage {
	for _, d := range h.opts.Plugins.Tools(family) {
		if d.GetName() == tool {
			return d.GetInputSchemaJson()
		}
	}
	return nil
}

// unload removes a family's tools from this session (clients are notified).
func (h *Host) unload(family string) {
	h.reg.Lock()
	defer h.reg.Unlock()
	if !h.loaded[family] {
		return
	}
	var names []string
	for _, d := range h.opts.Plugins.Tools(family) {
		names = append(names, d.GetName())
		delete(h.tools, d.GetName())
	}
	h.srv.DeleteTools(names...)
	h.toolsVersion.Add(1)
	delete(h.loaded, family)
	delete(h.granted, family)
}

// unavailable explains why a family cannot be loaded.
func (h *Host) unavailable(family string) error {
	if why := h.set.RefusedFamily(family); why != "" {
		return fmt.Errorf("the %s family is unavailable: %s", family, why)
	}
	return fmt.Errorf("no installed plugin provides the %s family yet", family)
}

// wireTool turns a plugin's definition into the tool clients see.
func wireTool(d *aimemoryv1.ToolDefinition) mcp.Tool {
	t := mcp.NewToolWithRawSchema(d.GetName(), d.GetDescription(), d.GetInputSchemaJson())
	if a := d.GetAnnotations(); a != nil {
		t.Annotations = mcp.ToolAnnotation{ReadOnlyHint: a.ReadOnly, DestructiveHint: a.Destructive, IdempotentHint: a.Idempotent, OpenWorldHint: a.OpenWorld}
	}
	if d.GetAlwaysLoad() {
		t.Meta = alwaysLoadMeta()
	}
	return t
}

// alwaysLoadMeta asks a client that defers tool schemas to send this one
// in full with every request.
func alwaysLoadMeta() *mcp.Meta {
	return &mcp.Meta{AdditionalFields: map[string]any{"anthropic/alwaysLoad": true}}
}

// callContext is who is calling, as the host resolved it, for a tool of
// family: the context the plugin receives, and the caller its engine calls
// are made for (the supervisor signs it into the call's assertion).
func (h *Host) callContext(ctx context.Context, family string) (*aimemoryv1.CallContext, caller.Caller) {
	name := h.clientNameOf(ctx)
	cc := &aimemoryv1.CallContext{
		AgentId:    identity.Resolve(h.opts.AgentID, name),
		SessionId:  h.opts.SessionID,
		ClientName: name,

		DefaultNamespace: h.opts.DefaultNamespace,
	}
	return cc, caller.Caller{Principal: cc.AgentId, Session: cc.SessionId, Family: family, Scope: strings.Join(h.opts.Scope, " ")}
}

// route forwards a direct tool call to the plugin serving family.
func (h *Host) route(family string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := rawArguments(req)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return h.run(ctx, family, req.Params.Name, args).result(), nil
	}
}

// answer is a tool call's result: the text as the plugin rendered it.
type answer struct {
	text    []byte
	isError bool
}

func failed(err error) answer { return answer{text: []byte(err.Error()), isError: true} }

// result is the answer as mcp-go's result type (for the mcp-go path).
func (a answer) result() *mcp.CallToolResult {
	if a.isError {
		return mcp.NewToolResultError(string(a.text))
	}
	return mcp.NewToolResultText(string(a.text))
}

// run executes a tool of a loaded family for this session: the one path
// shared by direct calls and the memory_capabilities bridge.
func (h *Host) run(ctx context.Context, family, tool string, args []byte) answer {
	start, outcome := time.Now(), metrics.Refused
	defer func() {
		if ctx.Err() != nil && outcome != metrics.OK && outcome != metrics.ToolError {
			outcome = metrics.Cancelled // the client gave up (or the server is stopping)
		}
		h.opts.Metrics.ObserveCall(tool, outcome, time.Since(start))
	}()
	if err := h.permitCall(ctx, family, tool); err != nil {
		return failed(err)
	}
	if h.untyped(ctx) {
		args = typedArguments(h.scalarPropertiesOf(family, tool), args)
	}
	h.observeCall(tool, args)
	outcome = metrics.Unavailable
	if err := h.waitEngine(ctx); err != nil {
		return failed(err)
	}
	outcome = metrics.Failed
	if ctx.Err() != nil { // sent nowhere yet (past here, the plugin tells what happened)
		outcome = metrics.Cancelled
		return failed(errCancelled)
	}
	cc, who := h.callContext(ctx, family)
	resp, err := h.opts.Plugins.Call(ctx, who, tool, args, cc)
	if err != nil {
		h.log.Error("tool call failed", "tool", tool, "err", err)
		return failed(err)
	}
	if outcome = metrics.OK; resp.GetIsError() {
		outcome = metrics.ToolError
	}
	return answer{text: resp.GetText(), isError: resp.GetIsError()}
}

// counted is memory_capabilities counted as a call (a call it bridges is
// counted again, as its own tool, by run).
func (h *Host) counted(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, err := next(ctx, req)
		outcome := metrics.OK
		if err != nil || res == nil || res.IsError {
			outcome = metrics.ToolError
		}
		h.opts.Metrics.ObserveCall(capabilitiesName, outcome, time.Since(start))
		return res, err
	}
}

// rawArguments returns the call's arguments as the client sent them; they
// must be a JSON object (absent counts as {}).
func rawArguments(req mcp.CallToolRequest) ([]byte, error) {
	var raw []byte
	switch a := req.GetRawArguments().(type) {
	case json.RawMessage:
		raw = a
	case nil:
		return []byte("{}"), nil
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("arguments: %v", err)
		}
		raw = b
	}
	var obj map[string]json.RawMessage
	if string(raw) == "null" {
		return []byte("{}"), nil
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("arguments: must be a JSON object")
	}
	return raw, nil
}

func (h *Host) waitEngine(ctx context.Context) error {
	select {
	case <-h.opts.EngineReady:
		if h.opts.EngineErr != nil {
			if err := h.opts.EngineErr(); err != nil {
				return fmt.Errorf("memory engine is not available: %v", err)
			}
		}
		return nil
	case <-ctx.Done():
		return errCancelled
	}
}

// LoadedFamilies is the session's loaded families in canonical order.
func (h *Host) LoadedFamilies() []string {
	h.reg.Lock()
	defer h.reg.Unlock()
	var out []string
	for _, f := range h.set.Families() {
		if h.loaded[f] {
			out = append(out, f)
		}
	}
	return out
}

// ExpectedTools is the number of family tools the session registered.
func (h *Host) ExpectedTools() int {
	n := 0
	for _, f := range h.LoadedFamilies() {
		n += len(h.opts.Plugins.Tools(f))
	}
	return n
}
