package record

import (
	"math"
	"strings"
	"testing"
)

func TestValidationNamesFieldAndRule(t *testing.T) {
	cases := []struct {
		err   error
		field string // "" = valid
	}{
		{ValidateTitle("ok"), ""},
		{ValidateTitle(" \t"), "title"},
		{ValidateTitle(strings.Repeat("é", 512)), ""},
		{ValidateTitle(strings.Repeat("é", 513)), "title"},
		{ValidateTitle("a\x00b"), "title"},
		{ValidateContent("line\nline\ttab"), ""},
		{ValidateContent("crlf\r\n"), "content"},
		{ValidateContent(strings.Repeat("x", MaxContentBytes+1)), "content"},
		{ValidateNamespace("namespace", "org/team/agent"), ""},
		{ValidateNamespace("namespace", "*"), ""},
		{ValidateNamespace("namespace", "/lead"), "namespace"},
		{ValidateNamespace("namespace", "a//b"), "namespace"},
		{ValidateNamespace("namespace", "a/../b"), "namespace"},
		{ValidateNamespace("namespace", "has space"), "namespace"},
		{ValidateNamespace("namespace", "a/b/c/d/e/f/g/h/i"), "namespace"},
		{ValidateNamespace("namespace", "a/b/c/d/e/f/g/h"), ""},
		{ValidateNamespace("namespace", " "), "namespace"},
		{ValidateNamespace("namespace", "a/"), "namespace"},
		{ValidateNamespace("namespace", " a"), "namespace"},
		{ValidateNamespace("namespace", "a\\b"), "namespace"},
		{ValidateNamespace("namespace", "a\xffb"), "namespace"},
		{ValidateNamespace("namespace", "./a"), "namespace"},
		{ValidateNamespace("namespace", strings.Repeat("n", 513)), "namespace"},
		{ValidateNamespace("namespace", ""), "namespace"},
		{ValidateNamespaceFilter("namespace_prefix", ""), ""},
		{ValidateNamespaceFilter("namespace_prefix", "org/team"), ""},
		{ValidateNamespaceFilter("namespace_prefix", " "), "namespace_prefix"},
		{ValidateNamespaceFilter("namespace_prefix", "a/"), "namespace_prefix"},
		{ValidateNamespaceFilter("namespace_prefix", "/"), "namespace_prefix"},
		{ValidateTags("tags", []string{"a", "b"}), ""},
		{ValidateTags("tags", []string{"a", " "}), "tags[1]"},
		{ValidateTags("tags", make([]string, 51)), "tags"},
		{ValidatePriority(10), ""},
		{ValidatePriority(0), "priority"},
		{ValidatePriority(math.MaxInt64), "priority"},
		{ValidateConfidence(0.5), ""},
		{ValidateConfidence(math.NaN()), "confidence"},
		{ValidateTier("tier", "long"), ""},
		{ValidateTier("tier", "Long"), "tier"},
		{ValidateSource("notify"), ""},
		{ValidateSource("martian"), "source"},
		{ValidateScope("collective"), ""},
		{ValidateScope("galaxy"), "scope"},
		{ValidateQuery("query", strings.Repeat("é", MaxQueryChars)), ""},
		{ValidateQuery("context", strings.Repeat("a", MaxQueryChars+1)), "context"},
		{ValidateTargetID("id", "1f3a9c2e"), ""},
		{ValidateTargetID("id", "1f3a9c2e-5b7d-4c1e-9a0f-2b4c6d8e0f1a"), ""},
		{ValidateTargetID("id", "3"), "id"},
		{ValidateTargetID("ids[1]", "1f3a9c2"), "ids[1]"},
		{ValidateTargetID("id", " "), "id"},
		{ValidateAgentID("agent_id", "ai:claude-code@host/1"), ""},
		{ValidateAgentID("agent_id", "bad id"), "agent_id"},
		{ValidateAgentID("agent_id", ""), "agent_id"},
		{ValidateMetadata([]byte(`{"a":{"b":[1]}}`)), ""},
		{ValidateMetadata([]byte(`[1]`)), "metadata"},
		{ValidateMetadata([]byte(strings.Repeat(`{"a":`, 33) + "1" + strings.Repeat("}", 33))), "metadata"},
	}
	for i, c := range cases {
		if c.field == "" {
			if c.err != nil {
				t.Errorf("case %d: unexpected error %v", i, c.err)
			}
			continue
		}
		fe, ok := c.err.(*FieldError)
		if !ok || fe.Field != c.field || fe.Rule == "" {
			t.Errorf("case %d: error %v, want a FieldError for %q", i, c.err, c.field)
		}
	}
}

func TestAncestorsAndDepth(t *testing.T) {
	got := Ancestors("org/unit/team")
	if strings.Join(got, ",") != "org/unit/team,org/unit,org" || Depth("org/unit/team") != 3 || len(Ancestors("flat")) != 1 {
		t.Fatalf("Ancestors = %v", got)
	}
}

func TestTimes(t *testing.T) {
	ns, err := ParseTime("since", "2026-01-02T03:04:05+02:00")
	if err != nil || FormatTime(ns) != "2026-01-02T01:04:05Z" {
		t.Fatalf("ParseTime = %d %v → %s", ns, err, FormatTime(ns))
	}
	if _, err := ParseTime("since", "yesterday"); err == nil || !strings.HasPrefix(err.Error(), "since:") {
		t.Fatalf("bad time: %v", err)
	}
	if _, err := ParseTime("until", "9999-01-01T00:00:00Z"); err == nil {
		t.Fatal("a time beyond Unix nanoseconds must be an error")
	}
	if b, err := ParseTimeBound("until", "9999-01-01T00:00:00Z"); err != nil || b != math.MaxInt64 {
		t.Fatalf("open bound = %d %v", b, err)
	}
	if FormatTime(0) != "" {
		t.Fatal("zero time must render empty")
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                       `""`,
		"tier\n":                 `"tier\n"`,
		strings.Repeat("a", 64):  `"` + strings.Repeat("a", 64) + `"`,
		strings.Repeat("a", 100): `"` + strings.Repeat("a", 64) + `"… (100 bytes)`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%.20q) = %s, want %s", in, got, want)
		}
	}
	if err := ValidateTier("tier", strings.Repeat("x", 10<<20)); len(err.Error()) > 160 {
		t.Errorf("tier error is %d bytes long", len(err.Error()))
	}
}

// ValidateMetadataObject applies ValidateMetadata's rules to a decoded object.
func TestValidateMetadataObject(t *testing.T) {
	deep := map[string]any{}
	for i, m := 0, deep; i < MaxMetadataDepth; i++ {
		next := map[string]any{}
		m["k"] = next
		m = next
	}
	raw := []byte(strings.Repeat(`{"k":`, MaxMetadataDepth+1) + "{}" + strings.Repeat("}", MaxMetadataDepth+1))
	if ValidateMetadata(raw) == nil || ValidateMetadataObject(deep, raw) == nil {
		t.Errorf("metadata %d levels deep passed", MaxMetadataDepth+1)
	}
	if err := ValidateMetadataObject(map[string]any{"a": []any{1.0}}, []byte(`{"a":[1]}`)); err != nil {
		t.Errorf("small metadata: %v", err)
	}
	if err := ValidateMetadataObject(map[string]any{}, make([]byte, MaxMetadataBytes+1)); err == nil {
		t.Errorf("metadata over %d bytes passed", MaxMetadataBytes)
	}
}
