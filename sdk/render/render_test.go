package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestCutContent(t *testing.T) {
	if got := CutContent("id1", "short"); got != "short" {
		t.Errorf("short content changed: %q", got)
	}
	exact := strings.Repeat("a", ContentCut)
	if got := CutContent("id1", exact); got != exact {
		t.Error("content of exactly ContentCut bytes must stay whole")
	}
	// 'é' is 2 bytes: 1999 ASCII bytes then 'é' straddles the cut.
	long := strings.Repeat("a", ContentCut-1) + "é" + strings.Repeat("b", 500)
	got := CutContent("id1", long)
	want := strings.Repeat("a", ContentCut-1) + "…[502 more bytes; memory_get id1]"
	if got != want {
		t.Errorf("cut = …%q, want …%q", got[ContentCut-10:], want[ContentCut-10:])
	}
	if !utf8.ValidString(got) {
		t.Error("cut split a UTF-8 sequence")
	}
}

func TestEscapeTOON(t *testing.T) {
	tests := map[string]string{
		"plain":       "plain",
		"a|b":         `a\|b`,
		"k:v":         "k:v", // a colon cannot break a row
		`back\slash`:  `back\\slash`,
		"two\nlines":  `two\nlines`,
		"cr\r":        `cr\r`,
		`\|` + "\n:":  `\\\|\n:`,
		"unicode ✓ é": "unicode ✓ é",
	}
	for in, want := range tests {
		if got := EscapeTOON(in); got != want {
			t.Errorf("EscapeTOON(%q) = %q, want %q", in, got, want)
		}
	}
	if got := TagsCell([]string{"a,b", "c|d", "e"}); got != `a\,b,c\|d,e` {
		t.Errorf("TagsCell = %q", got)
	}
}

func sampleMemories() []*aimemoryv1.Memory {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixNano()
	return []*aimemoryv1.Memory{
		{
			Id: "11111111-aaaa", Title: "Pipes | colons: here", Tier: "long", Namespace: "org/team",
			Content: "line one\nline two", Tags: []string{"db", "x,y"}, Priority: 9, Confidence: 0.5,
			Source: "user", AccessCount: 3, CreatedAt: at, UpdatedAt: at,
			MetadataJson: []byte(`{"agent_id":"alice","scope":"team"}`),
		},
		{
			Id: "22222222-bbbb", Title: "Plain", Tier: "mid", Namespace: "global",
			Content: strings.Repeat("z", ContentCut+10), Priority: 5, Confidence: 1,
			Source: "claude", CreatedAt: at, UpdatedAt: at, MetadataJson: []byte(`{}`),
		},
	}
}

func TestTOONCompact(t *testing.T) {
	l := Listing{
		Meta:      []Pair{{"count", 2}, {"mode", "keyword"}, {"tokens_used", 12}, {"budget_overflow", true}},
		Key:       "memories",
		Memories:  sampleMemories(),
		Scores:    []float64{7.12345, 2},
		ShortIDs:  map[string]string{"11111111-aaaa": "11111111"},
		Namespace: "org/team",
		Caller:    "alice",
		Budgeted:  true,
	}
	got := l.Compact()
	want := strings.Join([]string{
		"count:2|tokens_used:12|budget_overflow:1",
		"memories[id|title|tier|namespace|priority|tags|agent_id|content]:",
		`11111111|Pipes \| colons: here|long|org/team|9|db,x\,y|alice|line one\nline two`,
		`22222222-bbbb|Plain||||||` + strings.Repeat("z", ContentCut) + `…[10 more bytes; memory_get 22222222-bbbb]`,
	}, "\n")
	if got != want {
		t.Errorf("toon_compact:\n%s\nwant:\n%s", got, want)
	}
	// Each row has exactly as many unescaped separators as the header.
	for _, row := range strings.Split(got, "\n")[2:] {
		if n := strings.Count(strings.ReplaceAll(row, `\|`, ""), "|"); n != 7 {
			t.Errorf("row has %d separators, want 7: %s", n, row)
		}
	}

	// Values every row shares are stated once; defaults and the caller's
	// agent id not at all.
	mems := sampleMemories()
	mems[1].Tier, mems[1].Namespace, mems[1].Priority, mems[1].MetadataJson = "long", "org/team", 9, []byte(`{"agent_id":"alice"}`)
	mems[0].Tags = nil
	l = Listing{Meta: []Pair{{"count", 2}, {"mode", "keyword"}, {"tokens_used", 12}}, Key: "memories", Memories: mems, Scores: []float64{1, 2}, Caller: "alice"}
	want = strings.Join([]string{
		"count:2",
		"all[tier|namespace|priority]:long|org/team|9",
		"memories[id|title|content]:",
		`11111111-aaaa|Pipes \| colons: here|line one\nline two`,
	}, "\n")
	if got := l.Compact(); !strings.HasPrefix(got, want+"\n22222222-bbbb|Plain|zzz") {
		t.Errorf("toon_compact:\n%.300s\nwant:\n%s", got, want)
	}
	if empty := (Listing{Meta: []Pair{{"count", 0}}, Key: "memories"}).Compact(); empty != "count:0\nmemories[id|title|content]:" {
		t.Errorf("empty toon_compact = %q", empty)
	}
}

func TestTOONFullWithoutScore(t *testing.T) {
	l := Listing{Meta: []Pair{{"count", 1}}, Key: "results", Memories: sampleMemories()[:1]}
	got := l.TOON()
	want := "count:1\n" +
		"memories[id|title|tier|namespace|priority|confidence|access_count|tags|source|created_at|updated_at|metadata|content]:\n" +
		`11111111-aaaa|Pipes \| colons: here|long|org/team|9|0.5|3|db,x\,y|user|2026-03-04T05:06:07Z|2026-03-04T05:06:07Z|{"agent_id":"alice","scope":"team"}|line one\nline two`
	if got != want {
		t.Errorf("toon:\n%s\nwant:\n%s", got, want)
	}
}

func TestJSONListing(t *testing.T) {
	l := Listing{Meta: []Pair{{"count", 2}}, Key: "results", Memories: sampleMemories()}
	out, err := l.Render(JSON)
	if err != nil {
		t.Fatal(err)
	}
	text, err := sdk.MarshalCompact(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(text), `{"count":2,"results":[{"id":"11111111-aaaa","title":"Pipes | colons: here","tier":"long","namespace":"org/team","priority":9,"confidence":0.5,"access_count":3,"tags":["db","x,y"],"source":"user","created_at":"2026-03-04T05:06:07Z","updated_at":"2026-03-04T05:06:07Z","metadata":{"agent_id":"alice","scope":"team"},"content":"line one\nline two"},`) {
		t.Errorf("json = %s", text)
	}
	var res struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(text, &res); err != nil {
		t.Fatal(err)
	}
	second := res.Results[1]
	for _, absent := range []string{"score", "tags", "metadata", "access_count", "expires_at", "last_accessed_at"} {
		if _, ok := second[absent]; ok {
			t.Errorf("empty field %s present: %v", absent, second)
		}
	}
	if c := second["content"].(string); !strings.HasSuffix(c, "…[10 more bytes; memory_get 22222222-bbbb]") {
		t.Errorf("content not cut: …%s", c[len(c)-40:])
	}

	out, _ = Listing{Meta: []Pair{{"count", 0}}, Key: "memories"}.Render(JSON)
	if text, _ := sdk.MarshalCompact(out); string(text) != `{"count":0}` {
		t.Errorf("empty json = %s", text)
	}
}

// TestStandardsAndCut: standards come before the memories in TOON (short
// ids in the compact form) and after them in JSON, one as "standard";
// every form cuts content at Cut bytes, a negative Cut at none.
func TestStandardsAndCut(t *testing.T) {
	std := []Standard{{Namespace: "org", ID: "33333333-cccc", Title: "Rule", Content: "Always | review.\n" + strings.Repeat("r", 30)}}
	l := Listing{Meta: []Pair{{"count", 1}}, Key: "memories", Memories: sampleMemories()[1:], Standards: std, Cut: 20,
		ShortIDs: map[string]string{"33333333-cccc": "33333333", "22222222-bbbb": "22222222"}}
	want := strings.Join([]string{
		"count:1",
		"standards[namespace|id|title|content]:",
		`org|33333333|Rule|Always \| review.\nrrr…[27 more bytes; memory_get 33333333]`,
		"memories[id|title|content]:",
		"22222222|Plain|" + strings.Repeat("z", 20) + "…[1990 more bytes; memory_get 22222222]",
	}, "\n")
	if got := l.Compact(); got != want {
		t.Errorf("toon_compact:\n%s\nwant:\n%s", got, want)
	}
	if got := l.TOON(); !strings.Contains(got, "count:1\nstandards[namespace|id|title|content]:\norg|33333333-cccc|Rule|") ||
		!strings.Contains(got, "…[1990 more bytes; memory_get 22222222-bbbb]") {
		t.Errorf("toon:\n%s", got)
	}
	out, err := l.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if text := string(out.(json.RawMessage)); !strings.HasSuffix(text, `,"standard":{"namespace":"org","id":"33333333-cccc","title":"Rule","content":"Always | review.\nrrr…[27 more bytes; memory_get 33333333-cccc]"}}`) {
		t.Errorf("json = %s", text)
	}
	l.Cut, l.Standards = -1, nil
	if got := l.TOON(); !strings.HasSuffix(got, "|"+strings.Repeat("z", ContentCut+10)) {
		t.Errorf("a negative Cut cut the content: …%s", got[len(got)-60:])
	}
}

// TestCard: a memory's card says only what differs from the defaults and
// from the session's own namespace and agent; content comes last, whole.
func TestCard(t *testing.T) {
	m := sampleMemories()[0]
	m.MetadataJson = []byte(`{"agent_id":"alice","scope":"team","ticket":"OPS|1"}`)
	got := Card{Memory: m, Namespace: "org/team", Caller: "alice", Blocks: "links[x]:\nrow\n"}.Compact()
	want := "title:Pipes \\| colons: here\n" +
		`tier:long|priority:9|confidence:0.5|tags:db,x\,y|source:user|scope:team|metadata:{"ticket":"OPS\|1"}` + "\n" +
		"links[x]:\nrow\ncontent:\nline one\nline two"
	if got != want {
		t.Errorf("card:\n%s\nwant:\n%s", got, want)
	}
	plain := sampleMemories()[1]
	plain.Content = "c"
	if got := (Card{Memory: plain, Namespace: "proj"}).Compact(); got != "title:Plain\nnamespace:global\ncontent:\nc" {
		t.Errorf("card of defaults outside the session's namespace = %q", got)
	}
}
