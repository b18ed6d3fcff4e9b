package corefamily

import (
	"math"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// parsers decodes a tool's arguments without an engine: what the fuzz test
// and the validation tables exercise.
var parsers = map[string]func(raw []byte) error{
	"memory_store": func(raw []byte) error {
		_, _, err := storeRequest(sdk.Call{Arguments: raw, AgentID: "ai:test"})
		return err
	},
	"memory_recall": func(raw []byte) error { _, err := parseRecall(raw); return err },
	"memory_list":   func(raw []byte) error { _, err := parseList(raw); return err },
	"memory_get":    func(raw []byte) error { _, _, err := parseGet(raw); return err },
	"memory_search": func(raw []byte) error { _, err := parseSearch(raw); return err },
}

// TestArgumentErrors: every bad argument is an error naming the field and
// the rule; nothing is coerced or dropped.
func TestArgumentErrors(t *testing.T) {
	const st = `"title":"t","content":"c"`
	tests := []struct {
		tool, args, want string
	}{
		// Shape of the arguments.
		{"memory_list", `[1]`, "arguments: must be a JSON object (got array)"},
		{"memory_list", `"x"`, "arguments: must be a JSON object (got string)"},
		{"memory_list", `{"limit":`, "arguments: invalid JSON"},
		{"memory_list", `{"namspace":"x"}`, `unknown argument "namspace"; valid: agent_id, format, limit, namespace, order, since, tags, tier, until`},
		{"memory_recall", `{"context":"x","agent_id":"a"}`, `unknown argument "agent_id"`},
		{"memory_store", `{` + st + `,"kind":"fact"}`, `unknown argument "kind"`},

		// Required arguments.
		{"memory_store", `{"content":"c"}`, "title is required"},
		{"memory_store", `{"title":"t"}`, "content is required"},
		{"memory_store", `{"title":null,"content":"c"}`, "title is required"},
		{"memory_store", `{"title":5,"content":"c"}`, "title: must be a string (got number)"},
		{"memory_store", `{"title":"  ","content":"c"}`, "title: must not be empty"},
		{"memory_recall", `{}`, "context is required"},
		{"memory_recall", `{"context":["a"]}`, "context: must be a string (got array)"},
		{"memory_search", `{}`, "query is required"},
		{"memory_search", `{"query":" "}`, "query: must not be empty"},
		{"memory_get", `{}`, "id is required"},
		{"memory_get", `{"id":42}`, "id: must be a string (got number)"},
		{"memory_get", `{"id":"` + strings.Repeat("a", 129) + `"}`, "id: must be at most 128 bytes"},

		// Integers: type, fraction, range, overflow.
		{"memory_list", `{"limit":"5"}`, "limit: must be an integer (got string)"},
		{"memory_list", `{"limit":true}`, "limit: must be an integer (got boolean)"},
		{"memory_list", `{"limit":5.5}`, "limit: must be an integer (got 5.5)"},
		{"memory_list", `{"limit":1e-400}`, "limit: must be an integer (got 1e-400)"},
		{"memory_list", `{"limit":201}`, "limit: must be an integer from 0 to 200 (got 201)"},
		{"memory_list", `{"limit":-1}`, "limit: must be an integer from 0 to 200 (got -1)"},
		{"memory_list", `{"limit":99999999999999999999999}`, "limit: must be an integer from 0 to 200 (got 99999999999999999999999)"},
		{"memory_list", `{"limit":1e400}`, "limit: must be an integer from 0 to 200 (got 1e400)"},
		{"memory_recall", `{"context":"x","limit":51}`, "limit: must be an integer from 0 to 50 (got 51)"},
		{"memory_search", `{"query":"x","limit":500}`, "limit: must be an integer from 0 to 200 (got 500)"},
		{"memory_store", `{` + st + `,"priority":11}`, "priority: must be an integer from 1 to 10 (got 11)"},
		{"memory_store", `{` + st + `,"priority":0}`, "priority: must be an integer from 1 to 10 (got 0)"},
		{"memory_store", `{` + st + `,"priority":5.5}`, "priority: must be an integer (got 5.5)"},
		{"memory_store", `{` + st + `,"priority":4294967301}`, "priority: must be an integer from 1 to 10 (got 4294967301)"},
		{"memory_store", `{` + st + `,"priority":"high"}`, "priority: must be an integer (got string)"},
		{"memory_recall", `{"context":"x","budget_tokens":-1}`, "budget_tokens: must be an integer from 0 to"},
		{"memory_recall", `{"context":"x","budget_tokens":"100"}`, "budget_tokens: must be an integer (got string)"},

		// Numbers.
		{"memory_store", `{` + st + `,"confidence":"1"}`, "confidence: must be a number (got string)"},
		{"memory_store", `{` + st + `,"confidence":1.5}`, "confidence: must be a number from 0.0 to 1.0 (got 1.5)"},
		{"memory_store", `{` + st + `,"confidence":1e999}`, "confidence: must be a number from 0.0 to 1.0"},

		// Arrays and objects.
		{"memory_store", `{` + st + `,"tags":"a,b"}`, "tags: must be an array of strings (got string)"},
		{"memory_store", `{` + st + `,"tags":["a",1]}`, "tags[1]: must be a string (got number)"},
		{"memory_store", `{` + st + `,"tags":["a",""]}`, "tags[1]: must not be empty"},
		{"memory_store", `{` + st + `,"metadata":[1]}`, "metadata: must be a JSON object (got array)"},
		{"memory_store", `{` + st + `,"metadata":"{}"}`, "metadata: must be a JSON object (got string)"},
		{"memory_recall", `{"context":"x","tags":["a"]}`, "tags: must be a string (got array)"},
		{"memory_recall", `{"context":"x","tags":" "}`, "tags: must not be empty"},
		{"memory_recall", `{"context":"x","context_tokens":"a b"}`, "context_tokens: must be an array of strings (got string)"},
		{"memory_recall", `{"context":"x","context_tokens":[null]}`, "context_tokens[0]: must be a string (got null)"},

		// Enumerations and record rules.
		{"memory_store", `{` + st + `,"tier":"huge"}`, `tier: must be one of short, mid, long (got "huge")`},
		{"memory_store", `{` + st + `,"source":"web"}`, `source: must be one of user, claude`},
		{"memory_store", `{` + st + `,"on_conflict":"replace"}`, `on_conflict: must be one of merge, version, error (got "replace")`},
		{"memory_store", `{` + st + `,"scope":"public"}`, `scope: must be one of private, team, unit, org, collective (got "public")`},
		{"memory_store", `{` + st + `,"metadata":{"scope":"public"}}`, `scope: must be one of`},
		{"memory_store", `{` + st + `,"metadata":{"scope":3}}`, "metadata.scope: must be a string"},
		{"memory_store", `{` + st + `,"agent_id":"bad id!"}`, "agent_id: may contain only ASCII letters"},
		{"memory_store", `{` + st + `,"metadata":{"agent_id":7}}`, "metadata.agent_id: must be a string"},
		{"memory_store", `{` + st + `,"metadata":{"agent_id":"no spaces"}}`, "metadata.agent_id: may contain only"},
		{"memory_store", `{` + st + `,"namespace":"a//b"}`, "namespace: must not contain an empty segment"},
		{"memory_store", `{"title":"t","content":"a\r\nb"}`, "content: must not contain control characters"},
		{"memory_store", `{` + st + `,"metadata":{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, "metadata: must nest at most 32 levels deep"},
		{"memory_store", `{` + st + `,"format":"yaml"}`, `format: must be one of toon_compact, toon, json (got "yaml")`},
		{"memory_list", `{"tier":"permanent"}`, `tier: must be one of short, mid, long (got "permanent")`},
		{"memory_list", `{"agent_id":"a b"}`, "agent_id: may contain only"},
		{"memory_list", `{"namespace":"../x"}`, "namespace: must not contain a '.' or '..' segment"},
		{"memory_list", `{"namespace":" "}`, "namespace: must not be empty"},
		{"memory_list", `{"namespace":"a/"}`, "namespace: must not start or end with '/'"},
		{"memory_recall", `{"context":"x","namespace":"a/"}`, "namespace: must not start or end with '/'"},
		{"memory_search", `{"query":"x","namespace":" "}`, "namespace: must not be empty"},
		{"memory_store", `{` + st + `,"namespace":" "}`, "namespace: must not be empty"},
		{"memory_store", `{` + st + `,"namespace":"a/"}`, "namespace: must not start or end with '/'"},
		{"memory_list", `{"format":"xml"}`, `format: must be one of toon_compact, toon, json (got "xml")`},
		{"memory_search", `{"query":"x","as_agent":"a b"}`, "as_agent: must not contain spaces"},
		{"memory_search", `{"query":"x","tier":"Long"}`, `tier: must be one of short, mid, long (got "Long")`},
		{"memory_recall", `{"context":"x","as_agent":"/a"}`, "as_agent: must not start or end with '/'"},
		{"memory_recall", `{"context":"x","since":"yesterday"}`, `since: must be an RFC 3339 timestamp`},
		{"memory_recall", `{"context":"x","until":"2026-13-01T00:00:00Z"}`, `until: must be an RFC 3339 timestamp`},
		{"memory_recall", `{"context":"x","since":"2026-02-01T00:00:00Z","until":"2026-01-01T00:00:00+02:00"}`, "since: must not be after until"},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			err := parsers[tc.tool]([]byte(tc.args))
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q; want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestArgumentsAccepted: valid values, nulls for optional arguments and
// integers written as 1e2 or 3.0 are fine.
func TestArgumentsAccepted(t *testing.T) {
	tests := []struct{ tool, args string }{
		{"memory_list", ``},
		{"memory_list", `null`},
		{"memory_list", `{}`},
		{"memory_list", `{"limit":1e2,"tier":"long","namespace":"a/b","agent_id":"ai:x@y","format":"json"}`},
		{"memory_list", `{"limit":null,"tier":null,"namespace":"","format":"toon"}`},
		{"memory_list", `{"limit":0}`},
		{"memory_search", `{"query":"a b","limit":3.0,"as_agent":"org/team/me"}`},
		{"memory_recall", `{"context":"x","since":"2026-01-01T00:00:00+02:00","until":"2026-01-01T00:00:00Z","budget_tokens":0,"context_tokens":["a"],"tags":"t"}`},
		{"memory_get", `{"id":"abc","format":"json"}`},
		{"memory_store", `{"title":"t","content":"c","tier":"long","tags":[],"priority":10,"confidence":0,"source":"notify","metadata":{},"scope":"team","on_conflict":"version"}`},
	}
	for _, tc := range tests {
		if err := parsers[tc.tool]([]byte(tc.args)); err != nil {
			t.Errorf("%s %s: %v", tc.tool, tc.args, err)
		}
	}

	// Bounds beyond what Unix nanoseconds hold mean "unbounded", not a wrap.
	q, err := parseRecall([]byte(`{"context":"x","since":"0001-01-01T00:00:00Z","until":"9999-12-31T23:59:59Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.filter.CreatedSince != math.MinInt64 || q.filter.CreatedUntil != math.MaxInt64 {
		t.Errorf("since/until = %d/%d", q.filter.CreatedSince, q.filter.CreatedUntil)
	}
}

// TestStoreIdentity: agent_id argument > metadata.agent_id > the session's
// identity > anonymous; scope argument > metadata.scope; other metadata kept
// exactly (large numbers too).
func TestStoreIdentity(t *testing.T) {
	tests := []struct {
		name, session, args, wantMeta string
	}{
		{"argument wins", "ai:host", `"agent_id":"alice","metadata":{"agent_id":"bob"}`, `{"agent_id":"alice"}`},
		{"metadata next", "ai:host", `"metadata":{"agent_id":"bob"}`, `{"agent_id":"bob"}`},
		{"session next", "ai:host", ``, `{"agent_id":"ai:host"}`},
		{"anonymous last", "", ``, `{"agent_id":"anonymous"}`},
		{"scope argument", "", `"scope":"org","metadata":{"scope":"team"}`, `{"agent_id":"anonymous","scope":"org"}`},
		{"scope in metadata", "", `"metadata":{"scope":"team","n":12345678901234567890}`, `{"agent_id":"anonymous","n":12345678901234567890,"scope":"team"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := `{"title":"t","content":"c"`
			if tc.args != "" {
				args += "," + tc.args
			}
			req, _, err := storeRequest(sdk.Call{Arguments: []byte(args + "}"), AgentID: tc.session})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(req.GetMemory().GetMetadataJson()); got != tc.wantMeta {
				t.Errorf("metadata = %s, want %s", got, tc.wantMeta)
			}
		})
	}

	req, _, err := storeRequest(sdk.Call{Arguments: []byte(`{"title":"t","content":"c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	m := req.GetMemory()
	if m.GetTier() != "mid" || m.GetNamespace() != "global" || m.GetPriority() != 5 || m.GetConfidence() != 1 || m.GetSource() != "claude" ||
		req.GetOnConflict() != aimemoryv1.ConflictPolicy_CONFLICT_POLICY_MERGE {
		t.Errorf("defaults: %v on_conflict=%v", m, req.GetOnConflict())
	}
}

// BenchmarkStoreRequest is the plugin's own work on a memory_store call
// (the arguments of BenchmarkCallOverMCP's stores) before the engine call.
func BenchmarkStoreRequest(b *testing.B) {
	call := sdk.Call{
		Arguments: []byte(`{"title":"note 100017 on release","content":"release deploy socket note 100017 about token and engine"}`),
		AgentID:   "ai:bench",
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := storeRequest(call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseGet is the plugin's own argument work on a memory_get call.
func BenchmarkParseGet(b *testing.B) {
	raw := []byte(`{"id":"0b6f3c2e-6f1d-4c1e-9a7e-2d1f0c9b8a71"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := parseGet(raw); err != nil {
			b.Fatal(err)
		}
	}
}
