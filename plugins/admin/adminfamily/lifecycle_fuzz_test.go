package adminfamily

import (
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
)

// lifecycleParsers are the lifecycle tools' argument decoders, engine-free.
var lifecycleParsers = map[string]func([]byte) error{
	"memory_update":  func(b []byte) error { _, err := updateRequest(sdk.Call{Arguments: b}); return err },
	"memory_delete":  func(b []byte) error { _, err := deleteRequest(sdk.Call{Arguments: b}); return err },
	"memory_forget":  func(b []byte) error { _, err := forgetRequest(sdk.Call{Arguments: b}); return err },
	"memory_gc":      func(b []byte) error { _, err := gcRequest(sdk.Call{Arguments: b}); return err },
	"memory_promote": func(b []byte) error { _, err := promoteRequest(sdk.Call{Arguments: b}); return err },
}

// FuzzLifecycleArguments feeds arbitrary bytes to every lifecycle tool's argument
// decoding: it must answer with a request or an error, never panic, and
// an error always says something.
// Run: go test -fuzz=FuzzLifecycleArguments ./plugins/admin/adminfamily
func FuzzLifecycleArguments(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"a":`,
		`{"id":"abc","title":"t","content":"c","tier":"long","namespace":"a/b","tags":["x"],"priority":3,"confidence":0.5,"expires_at":"","metadata":{"scope":"team"}}`,
		`{"id":"abc","expires_at":"2026-01-01T00:00:00Z","priority":1e400}`,
		`{"id":"abc","archive":true,"agent_id":"ai:x"}`,
		`{"namespace":"a","pattern":"draft notes","tier":"short","dry_run":false}`,
		`{"dry_run":true}`,
		`{"id":"abc","to_namespace":"a"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for tool, parse := range lifecycleParsers {
			if err := parse(data); err != nil && err.Error() == "" {
				t.Errorf("%s: empty error message for %q", tool, data)
			}
		}
	})
}

// TestLifecycleSchemasMatchArguments: each tool accepts exactly its schema's
// properties (plus agent_id where the reference took one).
func TestLifecycleSchemasMatchArguments(t *testing.T) {
	for _, tool := range (&service{}).lifecycleTools() {
		parse := lifecycleParsers[tool.Name]
		if parse == nil {
			t.Fatalf("no parser for %s", tool.Name)
		}
		if err := parse([]byte(`{"no_such_argument":1}`)); err == nil {
			t.Errorf("%s accepted an unknown argument", tool.Name)
		}
		if tool.Description == "" || len(tool.Schema) == 0 {
			t.Errorf("%s lacks a description or schema", tool.Name)
		}
	}
}
