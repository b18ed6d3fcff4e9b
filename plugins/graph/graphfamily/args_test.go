package graphfamily

import (
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func testCall(raw []byte) sdk.Call {
	return sdk.Call{Arguments: raw, AgentID: "ai:test"}
}

// parsers decodes each tool's arguments without an engine: what the fuzz
// test and the validation table exercise.
var parsers = map[string]func(raw []byte) error{
	"memory_link":                func(raw []byte) error { _, err := parseLink(testCall(raw)); return err },
	"memory_kg_invalidate":       func(raw []byte) error { _, err := parseInvalidate(testCall(raw)); return err },
	"memory_get_links":           func(raw []byte) error { _, err := parseGetLinks(raw); return err },
	"memory_kg_query":            func(raw []byte) error { _, err := parseQuery(raw); return err },
	"memory_kg_timeline":         func(raw []byte) error { _, err := parseTimeline(raw); return err },
	"memory_entity_register":     func(raw []byte) error { _, err := parseRegister(testCall(raw)); return err },
	"memory_entity_get_by_alias": func(raw []byte) error { _, err := parseByAlias(raw); return err },
	"memory_get_taxonomy":        func(raw []byte) error { _, err := parseTaxonomy(raw); return err },
}

// TestArgumentErrors: every bad argument is an error naming the field and
// the rule; nothing is coerced or dropped.
func TestArgumentErrors(t *testing.T) {
	const st = `"source_id":"aaaaaaaa","target_id":"bbbbbbbb"`
	tests := []struct {
		tool, args, want string
	}{
		{"memory_link", `[]`, "arguments: must be a JSON object"},
		{"memory_link", `{"target_id":"bbbbbbbb"}`, "source_id is required"},
		{"memory_link", `{"source_id":"aaaaaaaa"}`, "target_id is required"},
		{"memory_link", `{"source_id":"3","target_id":"bbbbbbbb"}`, "source_id: must be a full id or a short id of at least 8 characters"},
		{"memory_kg_invalidate", `{"source_id":"aaaaaaaa","target_id":"bbbbbbb","relation":"supersedes"}`, "target_id: must be a full id or a short id of at least 8 characters"},
		{"memory_link", `{"source_id":3,"target_id":"bbbbbbbb"}`, "source_id: must be a string (got number)"},
		{"memory_link", `{"source_id":" ","target_id":"bbbbbbbb"}`, "source_id: must not be empty"},
		{"memory_link", `{"source_id":"aaaaaaaa","target_id":"aaaaaaaa"}`, "target_id: must differ from source_id"},
		{"memory_link", `{` + st + `,"relation":"depends_on"}`, "relation: must be one of related_to, supersedes, contradicts, derived_from"},
		{"memory_link", `{` + st + `,"relation":1}`, "relation: must be a string"},
		{"memory_link", `{` + st + `,"agent_id":"x"}`, `unknown argument "agent_id"`},
		{"memory_link", `{"source_id":"` + strings.Repeat("x", 129) + `","target_id":"bbbbbbbb"}`, "source_id: must be at most 128 bytes"},
		{"memory_kg_invalidate", `{` + st + `}`, "relation is required"},
		{"memory_kg_invalidate", `{` + st + `,"relation":"nope"}`, "relation: must be one of"},
		{"memory_kg_invalidate", `{` + st + `,"relation":"supersedes","valid_until":"tomorrow"}`, "valid_until: must be an RFC 3339 timestamp"},
		{"memory_kg_invalidate", `{` + st + `,"relation":"supersedes","valid_until":5}`, "valid_until: must be a string"},
		{"memory_kg_invalidate", `{"source_id":"aaaaaaaa","target_id":"aaaaaaaa","relation":"supersedes"}`, "target_id: must differ"},
		{"memory_get_links", `{}`, "id is required"},
		{"memory_get_links", `{"id":"a\u0001"}`, "id: must not contain control characters"},
		{"memory_kg_query", `{}`, "source_id is required"},
		{"memory_kg_query", `{"source_id":"a","max_depth":0}`, "max_depth: must be an integer from 1 to 5 (got 0)"},
		{"memory_kg_query", `{"source_id":"a","max_depth":6}`, "max_depth: must be an integer from 1 to 5 (got 6)"},
		{"memory_kg_query", `{"source_id":"a","max_depth":2.5}`, "max_depth: must be an integer"},
		{"memory_kg_query", `{"source_id":"a","max_depth":"3"}`, "max_depth: must be an integer (got string)"},
		{"memory_kg_query", `{"source_id":"a","direction":"up"}`, "direction: must be one of out, in, both"},
		{"memory_kg_query", `{"source_id":"a","relation":"likes"}`, "relation: must be one of"},
		{"memory_kg_query", `{"source_id":"a","valid_at":"2026-13-01"}`, "valid_at: must be an RFC 3339 timestamp"},
		{"memory_kg_query", `{"source_id":"a","valid_at":"9999-01-01T00:00:00Z"}`, "valid_at: must be between the years"},
		{"memory_kg_query", `{"source_id":"a","allowed_agents":"ai:x"}`, "allowed_agents: must be an array of strings"},
		{"memory_kg_query", `{"source_id":"a","allowed_agents":["ai:x",3]}`, "allowed_agents[1]: must be a string"},
		{"memory_kg_query", `{"source_id":"a","allowed_agents":["bad agent"]}`, "allowed_agents[0]: may contain only"},
		{"memory_kg_query", `{"source_id":"a","limit":0}`, "limit: must be an integer from 1 to 1000 (got 0)"},
		{"memory_kg_query", `{"source_id":"a","limit":1001}`, "limit: must be an integer from 1 to 1000"},
		{"memory_kg_query", `{"source_id":"a","depth":2}`, `unknown argument "depth"`},
		{"memory_kg_timeline", `{"source_id":"a","since":"x"}`, "since: must be an RFC 3339 timestamp"},
		{"memory_kg_timeline", `{"source_id":"a","until":"2026-01-01"}`, "until: must be an RFC 3339 timestamp"},
		{"memory_kg_timeline", `{"source_id":"a","limit":-1}`, "limit: must be an integer from 1 to 1000"},
		{"memory_entity_register", `{"namespace":"n"}`, "canonical_name is required"},
		{"memory_entity_register", `{"canonical_name":"x"}`, "namespace is required"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"a//b"}`, "namespace: must not contain an empty segment"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","aliases":["ok",""]}`, "aliases[1]: must not be empty"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","aliases":["ok",7]}`, "aliases[1]: must be a string"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","aliases":"x"}`, "aliases: must be an array of strings"},
		{"memory_entity_register", `{"canonical_name":"a\nb","namespace":"n"}`, "canonical_name: must not contain control characters"},
		{"memory_entity_register", `{"canonical_name":"` + strings.Repeat("é", 513) + `","namespace":"n"}`, "canonical_name: must be at most 512 characters"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","metadata":[]}`, "metadata: must be a JSON object"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","metadata":{"agent_id":1}}`, "metadata.agent_id: must be a string"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","metadata":{"scope":"galaxy"}}`, "scope: must be one of"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","agent_id":"no spaces"}`, "agent_id: may contain only"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","kind":"entity"}`, `unknown argument "kind"`},
		{"memory_entity_get_by_alias", `{}`, "alias is required"},
		{"memory_entity_get_by_alias", `{"alias":"  "}`, "alias: must not be empty"},
		{"memory_entity_get_by_alias", `{"alias":"x","namespace":"a/../b"}`, "namespace: must not contain a '.' or '..' segment"},
		{"memory_get_taxonomy", `{"namespace_prefix":"///"}`, "namespace_prefix: must not start or end with '/'"},
		// One namespace rule for every tool: no trimming or stripping first.
		{"memory_get_taxonomy", `{"namespace_prefix":" "}`, "namespace_prefix: must not be empty"},
		{"memory_get_taxonomy", `{"namespace_prefix":"a/"}`, "namespace_prefix: must not start or end with '/'"},
		{"memory_get_taxonomy", `{"namespace_prefix":" a"}`, "namespace_prefix: must not contain spaces"},
		{"memory_entity_get_by_alias", `{"alias":"x","namespace":" "}`, "namespace: must not be empty"},
		{"memory_entity_get_by_alias", "{\"alias\":\"x\xff\"}", "alias: must be valid UTF-8"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n","aliases":["ok","\udc00"]}`, "aliases[1]: must be valid UTF-8"},
		{"memory_entity_get_by_alias", `{"alias":"x","namespace":"a/"}`, "namespace: must not start or end with '/'"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":" n "}`, "namespace: must not contain spaces"},
		{"memory_entity_register", `{"canonical_name":"x","namespace":"n/"}`, "namespace: must not start or end with '/'"},
		{"memory_get_taxonomy", `{"namespace_prefix":"a b"}`, "namespace_prefix: must not contain spaces"},
		{"memory_get_taxonomy", `{"depth":9}`, "depth: must be an integer from 0 to 8 (got 9)"},
		{"memory_get_taxonomy", `{"limit":0}`, "limit: must be an integer from 1 to 10000"},
		{"memory_get_taxonomy", `{"limit":10001}`, "limit: must be an integer from 1 to 10000"},
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

func TestArgumentDefaults(t *testing.T) {
	q, err := parseQuery([]byte(`{"source_id":"a","valid_at":"1970-01-01T00:00:00Z","allowed_agents":[" ai:x "]}`))
	if err != nil {
		t.Fatal(err)
	}
	if q.maxDepth != 1 || q.limit != 200 || q.direction != aimemoryv1.Direction_DIRECTION_OUT || q.relation != "" ||
		q.validAt != -1 || len(q.observers.GetIds()) != 1 || q.observers.GetIds()[0] != "ai:x" {
		t.Fatalf("query defaults = %+v", q)
	}
	if q, _ := parseQuery([]byte(`{"source_id":"a","allowed_agents":[]}`)); q.observers == nil || len(q.observers.GetIds()) != 0 {
		t.Fatalf("an empty allowed_agents must trust no one: %+v", q)
	}
	if q, _ := parseQuery([]byte(`{"source_id":"a","allowed_agents":null,"valid_at":""}`)); q.observers != nil || q.validAt != 0 {
		t.Fatalf("null and blank mean absent: %+v", q)
	}
	l, err := parseLink(testCall([]byte(`{"source_id":"aaaaaaaa","target_id":"bbbbbbbb"}`)))
	if err != nil || l.Relation != "related_to" {
		t.Fatalf("link defaults = %v, %v", l, err)
	}
	tx, err := parseTaxonomy([]byte(`{"namespace_prefix":"a/b"}`))
	if err != nil || tx.prefix != "a/b" || tx.depth != 8 || tx.limit != 1000 {
		t.Fatalf("taxonomy = %+v, %v", tx, err)
	}
	tl, err := parseTimeline([]byte(`{"source_id":"a","since":"0001-01-01T00:00:00Z"}`))
	if err != nil || tl.Limit != 200 || tl.Since >= 0 {
		t.Fatalf("timeline = %v, %v", tl, err)
	}
	r, err := parseRegister(testCall([]byte(`{"canonical_name":" X ","namespace":"n","aliases":[" y "],"metadata":{"k":1}}`)))
	if err != nil || r.CanonicalName != "X" || r.Namespace != "n" || r.Aliases[0] != "y" || string(r.MetadataJson) != `{"agent_id":"ai:test","k":1}` {
		t.Fatalf("register = %v, %v", r, err)
	}
	r, _ = parseRegister(testCall([]byte(`{"canonical_name":"X","namespace":"n","agent_id":"ai:author"}`)))
	if string(r.MetadataJson) != `{"agent_id":"ai:author"}` {
		t.Fatalf("agent_id is provenance only: %v", r)
	}
}
