package sdktest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/internal/bridge"
	"github.com/ai-memory/ai-memory/sdk/tokens"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Family calls a plugin's tools the way the host does: through its Family
// server, with a call context the host would have resolved.
type Family struct {
	t       testing.TB
	Server  aimemoryv1.FamilyServer
	AgentID string // the session identity; "ai:test" by default
	// Engine, when set, signs each call's assertion as the host would, so
	// the tools' engine calls are accepted.
	Engine *Engine
	family string // the family the calls are made for: the first declared
}

// NewFamily serves families in-process (no go-plugin process).
func NewFamily(t testing.TB, name string, families []sdk.Family) *Family {
	t.Helper()
	srv, err := Server(name, "test", families)
	if err != nil {
		t.Fatal(err)
	}
	f := &Family{t: t, Server: srv, AgentID: "ai:test"}
	if len(families) > 0 {
		f.family = families[0].Name
	}
	return f
}

// Server is the Family server sdk.Serve runs for families, in-process: for
// tests, and for test plugins that serve it with other protocol settings.
func Server(name, version string, families []sdk.Family) (aimemoryv1.FamilyServer, error) {
	return bridge.Server(name, version, families)
}

// WithEngine makes the calls' assertions valid for eng; it returns f.
func (f *Family) WithEngine(eng *Engine) *Family {
	f.Engine = eng
	return f
}

// Call runs tool with JSON args and returns the result text and isError.
func (f *Family) Call(tool, args string) (string, bool) {
	f.t.Helper()
	cc := &aimemoryv1.CallContext{AgentId: f.AgentID, SessionId: "s1", ClientName: "test"}
	if f.Engine != nil {
		var end func() error
		cc.Assertion, end = f.Engine.call(f.AgentID, f.family)
		defer func() {
			if err := end(); err != nil {
				f.t.Errorf("%s: ending the call: %v", tool, err)
			}
		}()
	}
	resp, err := f.Server.Call(context.Background(), &aimemoryv1.CallRequest{
		Tool:          tool,
		ArgumentsJson: []byte(args),
		Context:       cc,
	})
	if err != nil {
		f.t.Fatalf("%s %s: transport error %v", tool, args, err)
	}
	return string(resp.GetText()), resp.GetIsError()
}

// OK runs a call that must succeed and returns its text; with v non-nil it
// also decodes the JSON result into v.
func (f *Family) OK(tool, args string, v any) string {
	f.t.Helper()
	text, isErr := f.Call(tool, args)
	if isErr {
		f.t.Fatalf("%s %s: %s", tool, args, text)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(text), v); err != nil {
			f.t.Fatalf("%s: result is not the expected JSON: %v\n%s", tool, err, text)
		}
	}
	return text
}

// Fails runs a call that must be a tool error containing want.
func (f *Family) Fails(tool, args, want string) {
	f.t.Helper()
	text, isErr := f.Call(tool, args)
	if !isErr {
		f.t.Fatalf("%s %s: succeeded (%s); want error %q", tool, args, text, want)
	}
	if !strings.Contains(text, want) {
		f.t.Fatalf("%s %s: error %q; want it to contain %q", tool, args, text, want)
	}
}

// Tools returns the definitions Describe gives for family, after checking
// what every client relies on: an object schema with properties, a
// description on the tool and a type and description on every property,
// and required names that are properties.
func (f *Family) Tools(family string) []*aimemoryv1.ToolDefinition {
	f.t.Helper()
	resp, err := f.Server.Describe(context.Background(), &aimemoryv1.DescribeRequest{})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, fd := range resp.GetFamilies() {
		if fd.GetName() != family {
			continue
		}
		for _, tool := range fd.GetTools() {
			checkSchema(f.t, tool)
		}
		return fd.GetTools()
	}
	f.t.Fatalf("no family %q in %v", family, resp.GetFamilies())
	return nil
}

func checkSchema(t testing.TB, tool *aimemoryv1.ToolDefinition) {
	t.Helper()
	var s struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(tool.GetInputSchemaJson(), &s); err != nil {
		t.Errorf("%s: schema: %v", tool.GetName(), err)
		return
	}
	if s.Type != "object" || len(s.Properties) == 0 {
		t.Errorf("%s: schema must be an object with properties", tool.GetName())
	}
	if tool.GetDescription() == "" {
		t.Errorf("%s: no description", tool.GetName())
	}
	for name, p := range s.Properties {
		if p.Description == "" || p.Type == "" {
			t.Errorf("%s.%s: needs a type and a description", tool.GetName(), name)
		}
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			t.Errorf("%s: required %q is not a property", tool.GetName(), r)
		}
	}
}

// WireCost is what definitions cost a model in cl100k_base tokens, encoded
// as tools/list shows them (name, description, inputSchema, annotations):
// the whole list, and each tool alone.
func WireCost(t testing.TB, defs []*aimemoryv1.ToolDefinition) (total int, each map[string]int) {
	t.Helper()
	count := func(v any) int {
		raw, err := sdk.MarshalCompact(v)
		if err != nil {
			t.Fatal(err)
		}
		return tokens.Count(string(raw))
	}
	each = map[string]int{}
	var all []any
	for _, d := range defs {
		w := wireDefinition(d)
		each[d.GetName()] = count(w)
		all = append(all, w)
	}
	return count(all), each
}

func wireDefinition(tool *aimemoryv1.ToolDefinition) map[string]any {
	def := map[string]any{
		"name":        tool.GetName(),
		"description": tool.GetDescription(),
		"inputSchema": json.RawMessage(tool.GetInputSchemaJson()),
	}
	ann := map[string]bool{}
	if a := tool.GetAnnotations(); a != nil {
		for key, v := range map[string]*bool{"readOnlyHint": a.ReadOnly, "destructiveHint": a.Destructive, "idempotentHint": a.Idempotent, "openWorldHint": a.OpenWorld} {
			if v != nil {
				ann[key] = *v
			}
		}
	}
	if len(ann) > 0 {
		def["annotations"] = ann
	}
	return def
}
