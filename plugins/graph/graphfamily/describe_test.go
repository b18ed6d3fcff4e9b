package graphfamily

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
)

// TestDescribe checks what clients see of the eight tools: valid schemas, a
// description on every property, truthful hints, and the token cost (the
// reference's eight graph tools cost 1,694 cl100k_base tokens).
func TestDescribe(t *testing.T) {
	srv, err := sdk.NewFamilyServer("graph", "test", Families(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Describe(context.Background(), &aimemoryv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetFamilies()) != 1 || resp.GetFamilies()[0].GetName() != "graph" {
		t.Fatalf("families = %v, want [graph]", resp.GetFamilies())
	}
	tools := resp.GetFamilies()[0].GetTools()
	var names []string
	for _, tool := range tools {
		names = append(names, tool.GetName())
	}
	want := []string{"memory_kg_query", "memory_kg_timeline", "memory_kg_invalidate", "memory_link",
		"memory_get_links", "memory_entity_register", "memory_entity_get_by_alias", "memory_get_taxonomy"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	writers := map[string]bool{"memory_link": true, "memory_kg_invalidate": true, "memory_entity_register": true}
	enc := codec.NewCl100kBase()
	var defs []any
	largest, largestName := 0, ""
	for _, tool := range tools {
		checkSchema(t, tool)
		if tool.GetAlwaysLoad() {
			t.Errorf("%s: AlwaysLoad is for the core tools only", tool.GetName())
		}
		ann := tool.GetAnnotations()
		if writers[tool.GetName()] {
			if ann.ReadOnly != nil || ann.Destructive == nil || ann.GetDestructive() {
				t.Errorf("%s writes without destroying: want destructive=false only, got %v", tool.GetName(), ann)
			}
		} else if !ann.GetReadOnly() || ann.Destructive != nil {
			t.Errorf("%s reads: want readOnly only, got %v", tool.GetName(), ann)
		}
		def := mcpDefinition(tool)
		defs = append(defs, def)
		one, _ := sdk.MarshalCompact(def)
		n, err := enc.Count(string(one))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-28s %3d tokens", tool.GetName(), n)
		if n > largest {
			largest, largestName = n, tool.GetName()
		}
		if n > 400 {
			t.Errorf("%s costs %d tokens; keep each tool at most 400", tool.GetName(), n)
		}
	}
	all, err := sdk.MarshalCompact(defs)
	if err != nil {
		t.Fatal(err)
	}
	n, err := enc.Count(string(all))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the 8 graph tool definitions cost %d cl100k_base tokens (%d bytes of JSON; reference 1,694); largest %s %d", n, len(all), largestName, largest)
	if n > 900 {
		t.Errorf("graph tools cost %d tokens; keep them at most 900", n)
	}
}

// mcpDefinition is the tool as tools/list shows it.
func mcpDefinition(tool *aimemoryv1.ToolDefinition) map[string]any {
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

func checkSchema(t *testing.T, tool *aimemoryv1.ToolDefinition) {
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
