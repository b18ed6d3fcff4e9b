package corefamily

import (
	"testing"
)

// FuzzArguments feeds arbitrary bytes to every tool's argument decoding:
// it must answer with a value or an error, never panic.
// Run: go test -fuzz=FuzzArguments ./plugins/core/corefamily
func FuzzArguments(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"a":`,
		`{"title":"t","content":"c","tier":"long","tags":["a"],"priority":5,"confidence":0.5,"metadata":{"agent_id":"x","scope":"team"},"on_conflict":"version"}`,
		`{"context":"x y","namespace":"a/b","limit":1e1,"since":"2026-01-01T00:00:00Z","budget_tokens":10,"context_tokens":["q"],"format":"json"}`,
		`{"query":"x","limit":5.5,"as_agent":"org/team"}`,
		`{"limit":99999999999999999999,"tier":"mid","agent_id":"a"}`,
		`{"id":"abc"}`,
		`{"priority":-1e308,"confidence":1e999,"metadata":{"a":[[[[[]]]]]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for tool, parse := range parsers {
			if err := parse(data); err != nil && err.Error() == "" {
				t.Errorf("%s: empty error message for %q", tool, data)
			}
		}
	})
}
