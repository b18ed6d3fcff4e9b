package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/sdk"
)

// Schema version tags clients can switch on (spec §3.6).
const (
	familiesSchema      = "v0.6.4-families-1"
	familyListSchema    = "v0.6.4-family-list-1"
	familySchemasSchema = "v0.6.4-family-schemas-1"
)

func capabilitiesTool() mcp.Tool {
	// accept is taken but not advertised: only legacy clients ask for v1.
	schema := fmt.Sprintf(`{"type":"object","properties":{`+
		`"family":{"type":"string","enum":[%s],"description":"List its tools"},`+
		`"include_schema":{"type":"boolean","description":"With family: load it now, return its tool schemas"},`+
		`"tool":{"type":"string","description":"Run a loaded family's tool"},`+
		`"arguments":{"type":"object","description":"Its arguments"}}}`, quoteList(catalog.Families))
	t := mcp.NewToolWithRawSchema("memory_capabilities",
		"Memory tool families: what is loaded, load more, or run their tools.", json.RawMessage(schema))
	t.Annotations = mcp.ToolAnnotation{DestructiveHint: sdk.Bool(false)}
	t.Meta = &mcp.Meta{AdditionalFields: map[string]any{"anthropic/alwaysLoad": true}}
	return t
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ",")
}

type capabilitiesArgs struct {
	family        *string
	includeSchema bool
	tool          string
	arguments     json.RawMessage
	accept        string
}

func decodeCapabilitiesArgs(raw []byte) (capabilitiesArgs, error) {
	var a capabilitiesArgs
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return a, fmt.Errorf("arguments: must be a JSON object")
	}
	for k, v := range fields {
		switch k {
		case "family":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return a, fmt.Errorf("family: must be a string, one of %s", strings.Join(catalog.Families, ", "))
			}
			a.family = &s
		case "include_schema":
			if json.Unmarshal(v, &a.includeSchema) != nil {
				return a, fmt.Errorf("include_schema: must be a boolean")
			}
		case "tool":
			if json.Unmarshal(v, &a.tool) != nil || strings.TrimSpace(a.tool) == "" {
				return a, fmt.Errorf("tool: must be a non-empty string naming a tool")
			}
		case "arguments":
			var obj map[string]json.RawMessage
			if json.Unmarshal(v, &obj) != nil || obj == nil {
				return a, fmt.Errorf("arguments: must be a JSON object (the tool's arguments)")
			}
			a.arguments = v
		case "accept":
			if json.Unmarshal(v, &a.accept) != nil || (a.accept != "v1" && a.accept != "v2") {
				return a, fmt.Errorf("accept: must be \"v1\" or \"v2\"")
			}
		default:
			return a, fmt.Errorf("%s: unknown argument; memory_capabilities takes family, include_schema, tool, arguments, accept", k)
		}
	}
	switch {
	case a.tool != "" && (a.family != nil || a.includeSchema):
		return a, fmt.Errorf("tool: give either tool (to run it) or family (to list or load it), not both")
	case a.tool == "" && a.arguments != nil:
		return a, fmt.Errorf("arguments: needs tool (which tool to run)")
	case a.family != nil && strings.TrimSpace(*a.family) == "":
		return a, fmt.Errorf("family: must not be empty; one of %s", strings.Join(catalog.Families, ", "))
	case a.family != nil && !catalog.IsFamily(*a.family):
		return a, fmt.Errorf("family: unknown family %q; one of %s", *a.family, strings.Join(catalog.Families, ", "))
	case a.family == nil && a.includeSchema:
		return a, fmt.Errorf("include_schema: needs family (which family to load)")
	}
	return a, nil
}

func (h *Host) capabilities(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, err := rawArguments(req)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	args, err := decodeCapabilitiesArgs(raw)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if args.tool != "" {
		return h.bridge(ctx, args.tool, args.arguments), nil
	}
	var out any
	switch {
	case args.family == nil:
		out = h.overview(args.accept)
	case !h.visible(*args.family):
		err = fmt.Errorf("family: unknown family %q; one of %s", *args.family, strings.Join(h.visibleFamilies(), ", "))
	case args.includeSchema:
		out, err = h.expand(ctx, *args.family)
	default:
		out = map[string]any{"schema_version": familyListSchema, "family": *args.family,
			"loaded": h.isLoaded(*args.family), "tools": h.toolNames(*args.family)}
	}
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	text, err := sdk.MarshalCompact(out)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(string(text)), nil
}

// bridge runs a tool of a loaded family and returns its result unchanged,
// for clients that never refresh their tool list.
func (h *Host) bridge(ctx context.Context, tool string, args json.RawMessage) *mcp.CallToolResult {
	if args == nil {
		args = json.RawMessage("{}")
	}
	if catalog.IsAlwaysOn(tool) {
		return mcp.NewToolResultError("tool: memory_capabilities cannot run itself")
	}
	if text, ok := h.unloadedToolMessage(ctx, tool); ok {
		return mcp.NewToolResultError(text)
	}
	family := h.familyOfTool(tool)
	if family == "" || !h.isLoaded(family) {
		return mcp.NewToolResultError(fmt.Sprintf("tool: unknown tool %q; memory_capabilities lists the families and their tools", tool))
	}
	return h.run(ctx, family, tool, args)
}

// toolNames are a family's tools as its plugin declares them, or the
// contract's names when no installed plugin serves it.
func (h *Host) toolNames(family string) []string {
	defs := h.opts.Plugins.Tools(family)
	if len(defs) == 0 {
		return catalog.ToolsOf(family)
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.GetName()
	}
	return names
}

type familyRow struct {
	Name      string   `json:"name"`
	ToolCount int      `json:"tool_count"`
	Loaded    bool     `json:"loaded"`
	Installed *bool    `json:"installed,omitempty"` // only said when false
	Tools     []string `json:"tools"`
}

func (h *Host) overview(accept string) map[string]any {
	doc := map[string]any{
		"schema_version": "2",
		"version":        h.opts.Version,
		"tier":           "keyword",
		"features": map[string]any{
			"keyword_search": true, "semantic_search": false, "hybrid_recall": false,
			"recall_mode_active": "keyword_only", "runtime_family_loading": true,
		},
	}
	if accept == "v1" {
		doc["schema_version"] = "1"
		return doc
	}
	doc["profile"] = h.opts.Profile.Label()
	var rows []familyRow
	for _, f := range h.visibleFamilies() {
		names := h.toolNames(f)
		if f == "meta" {
			// memory_capabilities is always on and listed there, not here.
			names = slices.DeleteFunc(slices.Clone(names), catalog.IsAlwaysOn)
		}
		row := familyRow{Name: f, ToolCount: len(names), Loaded: h.isLoaded(f), Tools: names}
		if len(h.opts.Plugins.Tools(f)) == 0 {
			row.Installed = sdk.Bool(false)
		}
		rows = append(rows, row)
	}
	doc["families"] = map[string]any{"schema_version": familiesSchema, "always_on": catalog.AlwaysOn, "families": rows}
	return doc
}

// expand grants a family to this session: allowlist, then (for a family not
// yet loaded) the rate limit, then registration. Every attempt is audited.
func (h *Host) expand(ctx context.Context, family string) (any, error) {
	agent := h.identity()
	entry := AuditEntry{AgentID: agent, Event: "capability_expansion", Family: family}
	deny := func(reason string, err error) (any, error) {
		entry.Reason = reason
		h.audit(ctx, entry)
		return nil, err
	}
	if d := h.opts.Allowlist.Decide(agent, family); !d.Allowed {
		return deny("allowlist rule "+ruleName(d.Rule), deniedError(agent, family, d.Rule))
	}
	if len(h.opts.Plugins.Tools(family)) == 0 {
		return deny("unavailable", fmt.Errorf("family: no installed plugin provides the %s family yet", family))
	}
	if !h.isLoaded(family) && h.opts.Allowlist.Enabled() {
		if ok, wait := h.opts.RateLimit.Take(agent); !ok {
			return deny("rate_limited", fmt.Errorf("family: %s may load one new family per %s; try again in %s, or ask an operator to start the server with --profile core,%s",
				agent, h.opts.RateLimit.Interval(), wait.Round(1e9), family))
		}
	}
	// Start the plugin before granting, so a refused or broken binary is
	// reported here and the tools are callable the moment they are listed.
	if err := h.opts.Plugins.Start(family); err != nil {
		return deny("unavailable", fmt.Errorf("family: %s could not be started: %v", family, err))
	}
	if err := h.load(family); err != nil {
		return deny("unavailable", fmt.Errorf("family: %v", err))
	}
	entry.Granted, entry.Reason = true, "granted"
	h.audit(ctx, entry)
	var tools []mcp.Tool
	for _, d := range h.opts.Plugins.Tools(family) {
		tools = append(tools, wireTool(d))
	}
	return map[string]any{"schema_version": familySchemasSchema, "family": family, "loaded": true, "tools": tools}, nil
}
