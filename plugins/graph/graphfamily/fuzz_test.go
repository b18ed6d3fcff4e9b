package graphfamily

import (
	"testing"
)

// FuzzArguments feeds arbitrary bytes to every tool's argument decoding:
// it must answer with a value or an error, never panic.
// Run: go test -fuzz=FuzzArguments ./plugins/graph/graphfamily
func FuzzArguments(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"a":`,
		`{"source_id":"a","target_id":"b","relation":"supersedes"}`,
		`{"source_id":"a","target_id":"b","relation":"contradicts","valid_until":"2026-01-01T00:00:00+02:00"}`,
		`{"source_id":"a","max_depth":5,"direction":"both","relation":"derived_from","valid_at":"2026-01-01T00:00:00Z","allowed_agents":["ai:x"],"limit":1e3}`,
		`{"source_id":"a","since":"2026-01-01T00:00:00Z","until":"2026-02-01T00:00:00Z","limit":5.5}`,
		`{"canonical_name":"Straße","namespace":"a/b","aliases":["x","Y"],"metadata":{"agent_id":"x","scope":"team"},"agent_id":"ai:y"}`,
		`{"alias":"x","namespace":"a"}`,
		`{"namespace_prefix":"a/","depth":0,"limit":99999999999999999999}`,
		`{"id":"abc"}`,
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
