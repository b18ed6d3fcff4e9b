package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/sdk"
)

// capabilitiesName is the host's own always-on tool.
const capabilitiesName = "memory_capabilities"

// Schema version tags clients can switch on (spec §3.6).
const (
	familiesSchema      = "v0.6.4-families-1"
	familyListSchema    = "v0.6.4-family-list-1"
	familySchemasSchema = "v0.6.4-family-schemas-1"
)

func (h *Host) capabilitiesTool() mcp.Tool {
	// accept is taken but not advertised: only legacy clients ask for v1.
	// The family names are spelled out rather than an "enum", as in every
	// family's schema: fewer tokens, and a wrong name gets an error listing them.
	familyDesc, _ := json.Marshal(orList(h.set.Families()))
	schema := fmt.Sprintf(`{"type":"object","properties":{`+
		`"family":{"type":"string","description":%s},`+
		`"include_schema":{"type":"boolean","description":"Load its tools"},`+
		`"tool":{"type":"string","description":"Tool to run"},`+
		`"arguments":{"type":"object","description":"Its arguments"}}}`, familyDesc)
	t := mcp.NewToolWithRawSchema(capabilitiesName,
		"Memory tool families: list, load, or run their tools.", json.RawMessage(schema))
	t.Annotations = mcp.ToolAnnotation{DestructiveHint: sdk.Bool(false)}
	t.Meta = alwaysLoadMeta()
	return t
}

// orList spells names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

type capabilitiesArgs struct {
	family        *string
	includeSchema bool
	tool          string
	arguments     json.RawMessage
	accept        string
}

// expands reports whether these arguments may grant a family: a load
// with include_schema, or a bridged call of a tool whose family this
// session was not granted yet.
func (h *Host) expands(a capabilitiesArgs) bool {
	if a.family != nil && a.includeSchema {
		return true
	}
	if a.tool == "" {
		return false
	}
	f := h.set.FamilyOf(a.tool)
	return f != "" && !h.isGranted(f)
}

func decodeCapabilitiesArgs(raw []byte, set *catalog.Set) (capabilitiesArgs, error) {
	families := strings.Join(set.Families(), ", ")
	var a capabilitiesArgs
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return a, fmt.Errorf("arguments: must be a JSON object")
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names) // the same error on every run
	for _, k := range names {
		v := fields[k]
		switch k {
		case "family":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return a, fmt.Errorf("family: must be a string, one of %s", families)
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
			return a, fmt.Errorf("%s: unknown argument; %s takes family, include_schema, tool, arguments, accept", sdk.Quote(k), capabilitiesName)
		}
	}
	switch {
	case a.tool != "" && (a.family != nil || a.includeSchema):
		return a, fmt.Errorf("tool: give either tool (to run it) or family (to list or load it), not both")
	case a.tool == "" && a.arguments != nil:
		return a, fmt.Errorf("arguments: needs tool (which tool to run)")
	case a.family != nil && strings.TrimSpace(*a.family) == "":
		return a, fmt.Errorf("family: must not be empty; one of %s", families)
	case a.family != nil && !set.Has(*a.family):
		return a, fmt.Errorf("family: unknown family %s; one of %s", sdk.Quote(*a.family), families)
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
	args, err := decodeCapabilitiesArgs(raw, h.set)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if args.tool != "" {
		return h.bridge(ctx, args.tool, args.arguments), nil
	}
	var out any
	switch {
	case args.family == nil:
		out = h.overview(ctx, args.accept)
	case !h.visible(*args.family):
		err = fmt.Errorf("family: unknown family %s; one of %s", sdk.Quote(*args.family), strings.Join(h.visibleFamilies(), ", "))
	case args.includeSchema:
		relisted := h.relistWaiter(ctx)
		var version uint64
		if out, version, err = h.expand(ctx, *args.family); err == nil && version > 0 {
			releaseOrder(ctx)
			relisted(version)
		}
	default:
		out = map[string]any{"schema_version": familyListSchema, "family": *args.family,
			"loaded": h.isLoaded(*args.family), "tools": h.set.ToolsOf(*args.family)}
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

// bridge runs any tool the identity may use and returns its result
// unchanged, for clients that never refresh their tool list. A family not
// granted yet is granted on first use, through the same checks, rate limit
// and audit as an expansion (one call, not two), but its tools are not
// registered: the session's tool list, and so every later request of the
// client, stays as it was. Only include_schema or a profile adds tools.
func (h *Host) bridge(ctx context.Context, tool string, args json.RawMessage) *mcp.CallToolResult {
	if args == nil {
		args = json.RawMessage("{}")
	}
	if catalog.IsAlwaysOn(tool) {
		return mcp.NewToolResultError("tool: " + capabilitiesName + " cannot run itself")
	}
	unknown := mcp.NewToolResultError(fmt.Sprintf("tool: unknown tool %s; %s lists the families and their tools", sdk.Quote(tool), capabilitiesName))
	family := h.set.FamilyOf(tool)
	if family == "" || !h.visible(family) {
		return unknown
	}
	if !h.isGranted(family) {
		h.suggestUnloaded(tool, family)
		if !h.set.Installed(family) {
			return mcp.NewToolResultError(fmt.Sprintf("%s belongs to the %s family, which no installed plugin provides yet.", tool, family))
		}
		// An identity not cleared gets the denial of a direct call.
		if err := h.permitCall(ctx, family, tool); err != nil {
			return mcp.NewToolResultError(err.Error())
		}
		if err := h.grant(ctx, family, nil); err != nil {
			return mcp.NewToolResultError(err.Error())
		}
	}
	if !slices.Contains(h.set.ToolsOf(family), tool) {
		return unknown // a contract tool its installed plugin does not declare
	}
	return h.run(ctx, family, tool, args).result()
}

type familyRow struct {
	Name      string   `json:"name"`
	ToolCount int      `json:"tool_count"`
	Loaded    bool     `json:"loaded"`
	Installed *bool    `json:"installed,omitempty"` // only said when false
	Tools     []string `json:"tools"`
}

func (h *Host) overview(ctx context.Context, accept string) map[string]any {
	features := map[string]any{
		"keyword_search": true, "semantic_search": false, "hybrid_recall": false,
		"recall_mode_active": "keyword_only", "runtime_family_loading": true,
	}
	doc := map[string]any{
		"schema_version": "2",
		"version":        h.opts.Version,
		"tier":           "keyword",
		"features":       features,
	}
	if emb := h.embedder(ctx); emb != nil {
		doc["embedder"] = emb
		if emb["reachable"] == true && emb["vectors"].(uint64) > 0 {
			features["semantic_search"], features["hybrid_recall"], features["recall_mode_active"] = true, true, "hybrid"
			doc["tier"] = "semantic"
		}
	}
	if accept == "v1" {
		doc["schema_version"] = "1"
		return doc
	}
	doc["profile"] = h.opts.Profile.Label()
	doc["profiles"] = catalog.ProfileTable(h.visibleFamilies())
	var rows []familyRow
	for _, f := range h.visibleFamilies() {
		// Always-on tools are listed once, under always_on, not in their family.
		names := slices.DeleteFunc(h.set.ToolsOf(f), catalog.IsAlwaysOn)
		row := familyRow{Name: f, ToolCount: len(names), Loaded: h.isLoaded(f), Tools: names}
		if !h.set.Installed(f) {
			row.Installed = sdk.Bool(false)
		}
		rows = append(rows, row)
	}
	doc["families"] = map[string]any{"schema_version": familiesSchema, "always_on": catalog.AlwaysOn, "families": rows}
	return doc
}

// embedder is the live state of the data dir's embedding endpoint (nil:
// none configured, or the engine cannot say): reachable means its last
// request succeeded (or none was made yet).
func (h *Host) embedder(ctx context.Context) map[string]any {
	if h.opts.Vectors == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := h.opts.Vectors(ctx)
	if err != nil || !st.GetConfigured() {
		return nil
	}
	out := map[string]any{"model": st.GetModel(), "reachable": st.GetLastError() == "",
		"vectors": st.GetWithVector(), "memories": st.GetMemories()}
	if e := st.GetLastError(); e != "" {
		out["last_error"] = e
	}
	if n := st.GetOtherModel(); n > 0 {
		out["needs_reindex"] = n // vectors by an earlier model
	}
	return out
}

// grant clears a family for this session: allowlist, then (for a family
// not granted yet) the rate limit, then its plugin is started, so a refused
// or broken binary is reported here and its tools run at once, then
// register (nil: nothing is registered, as for the bridge). Every attempt
// is audited, once.
func (h *Host) grant(ctx context.Context, family string, register func() error) error {
	agent := h.identityOf(ctx)
	entry := AuditEntry{AgentID: agent, Event: "capability_expansion", Family: family}
	deny := func(reason string, err error) error {
		entry.Reason = reason
		h.audit(ctx, entry)
		return err
	}
	if d := h.opts.Allowlist.Decide(agent, family); !d.Allowed {
		return deny("allowlist rule "+ruleName(d.Rule), h.deniedError(agent, family, d))
	}
	if !h.set.Installed(family) {
		return deny("unavailable", fmt.Errorf("family: %v", h.unavailable(family)))
	}
	if !h.isGranted(family) && h.opts.Allowlist.Enabled() {
		if ok, wait := h.opts.RateLimit.Take(agent); !ok {
			return deny("rate_limited", fmt.Errorf("family: %s may load one new family per %s; try again in %s, or ask an operator to start the server with --profile %s,%s",
				agent, h.opts.RateLimit.Interval(), wait.Round(1e9), catalog.Base, family))
		}
	}
	if err := h.opts.Plugins.Start(family); err != nil {
		return deny("unavailable", fmt.Errorf("family: %s could not be started: %v", family, err))
	}
	if register != nil {
		if err := register(); err != nil {
			return deny("unavailable", fmt.Errorf("family: %v", err))
		}
	}
	h.reg.Lock()
	h.granted[family] = true
	h.reg.Unlock()
	entry.Granted, entry.Reason = true, "granted"
	h.audit(ctx, entry)
	return nil
}

// bridgeHint is the expansion result's one line for a model whose client
// has not refreshed its tool list yet.
const bridgeHint = "A tool not in your tool list yet runs through " + capabilitiesName + ` {"tool": "<name>", "arguments": {...}}.`

// expand grants a family and registers its tools in this session (mcp-go
// then sends tools/list_changed), and returns their schemas. version is
// the tools version that lists them when this call registered them, 0
// when they were registered already.
func (h *Host) expand(ctx context.Context, family string) (out any, version uint64, err error) {
	register := func() error {
		if h.isLoaded(family) {
			return nil
		}
		if err := h.load(family, true); err != nil {
			return err
		}
		version = h.ToolsVersion()
		return nil
	}
	if err := h.grant(ctx, family, register); err != nil {
		return nil, 0, err
	}
	var tools []mcp.Tool
	for _, d := range h.opts.Plugins.Tools(family) {
		tools = append(tools, wireTool(d))
	}
	return map[string]any{"schema_version": familySchemasSchema, "family": family, "loaded": true, "tools": tools, "hint": bridgeHint}, version, nil
}
