package corefamily

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

// TestDescribe checks what clients see of the five tools: valid schemas, a
// description on every property, truthful hints, and the token cost.
func TestDescribe(t *testing.T) {
	srv, err := sdk.NewFamilyServer("core", "test", Families(nil), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Describe(context.Background(), &aimemoryv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetFamilies()) != 1 || resp.GetFamilies()[0].GetName() != "core" {
		t.Fatalf("families = %v, want [core]", resp.GetFamilies())
	}
	tools := resp.GetFamilies()[0].GetTools()
	var names []string
	for _, tool := range tools {
		names = append(names, tool.GetName())
	}
	want := []string{"memory_store", "memory_recall", "memory_list", "memory_get", "memory_search"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}

	readOnly := map[string]bool{"memory_get": true, "memory_list": true, "memory_search": true}
	var defs []any
	for _, tool := range tools {
		checkSchema(t, tool)
		if !tool.GetAlwaysLoad() {
			t.Errorf("%s: not AlwaysLoad", tool.GetName())
		}
		ann := tool.GetAnnotations()
		if ann.GetReadOnly() != readOnly[tool.GetName()] { // unset means not read-only
			t.Errorf("%s: readOnly hint = %v", tool.GetName(), ann.ReadOnly)
		}
		if !readOnly[tool.GetName()] && (ann.Destructive == nil || ann.GetDestructive()) {
			t.Errorf("%s: must say destructive=false", tool.GetName())
		}
		defs = append(defs, mcpDefinition(tool))
	}

	enc, err := sdk.MarshalCompact(defs)
	if err != nil {
		t.Fatal(err)
	}
	n, err := codec.NewCl100kBase().Count(string(enc))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the 5 core tool definitions cost %d cl100k_base tokens (%d bytes of JSON)", n, len(enc))
	// A guard against creep. 36 arguments with a one-word description each
	// and truthful hints already cost about 580, so the cost is in the
	// argument count, not the wording.
	if n > 740 {
		t.Errorf("core tools cost %d tokens; keep them at most 740", n)
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
