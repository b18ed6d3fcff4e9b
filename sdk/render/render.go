// Package render is how list-like results reach an agent: toon_compact
// (the default, close to the cost of the memories' own text), toon, and
// json, with content cut at 2,000 bytes and a way to get the rest. Every
// family that answers with memories renders them the same way.
package render

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Output formats of recall, list and search (data-model §1.1).
const (
	TOONCompact = "toon_compact"
	TOON        = "toon"
	JSON        = "json"
)

// FormatArg reads the format argument; the default is the cheapest form.
func FormatArg(a *sdk.Args) (string, error) {
	return a.OneOf("format", TOONCompact, TOONCompact, TOON, JSON)
}

// Pair is one key of a result's header, in output order.
type Pair struct {
	Key string
	Val any // int, int64, string or bool
}

// Listing is a list-like result (recall, list, search: memories with a
// header) before rendering in one of the formats.
type Listing struct {
	Meta     []Pair
	Key      string // JSON key of the rows: "memories" or "results"
	Memories []*aimemoryv1.Memory
	Scores   []float64 // one per memory, or nil: no score anywhere
	// What the compact form leaves out or shortens: the namespace the call
	// asked for (each row's would repeat it), and short ids (full id →
	// shortest unique prefix; nil = full ids).
	Namespace string
	ShortIDs  map[string]string
	Caller    string // the session's agent id: shared by every row, it says nothing
	Budgeted  bool   // a token budget was asked for: tokens_used matters
	// Standards are the namespace standards that apply, most general first:
	// in TOON before the memories (rules before facts), in JSON after them
	// as "standard" (one) or "standards".
	Standards []Standard
	Cut       int // bytes of content a row carries (0 = ContentCut, negative = whole)
}

// Render returns the result in format: a JSON object, or TOON text.
func (l Listing) Render(format string) (any, error) {
	switch format {
	case JSON:
		return l.JSON()
	case TOONCompact:
		return sdk.Text(l.Compact()), nil
	}
	return sdk.Text(l.TOON()), nil
}

// JSON renders {meta..., key: [views]} with keys in a fixed order.
func (l Listing) JSON() (any, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range l.Meta {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONPair(&b, p.Key, p.Val); err != nil {
			return nil, err
		}
	}
	if len(l.Memories) > 0 {
		views := make([]View, len(l.Memories))
		for i, m := range l.Memories {
			views[i] = NewView(m)
			views[i].Content = CutContentAt(m.GetId(), m.GetContent(), l.Cut)
			if l.Scores != nil {
				s := Round3(l.Scores[i])
				views[i].Score = &s
			}
		}
		if len(l.Meta) > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONPair(&b, l.Key, views); err != nil {
			return nil, err
		}
	}
	if len(l.Standards) > 0 {
		std := make([]Standard, len(l.Standards))
		for i, st := range l.Standards {
			std[i] = st
			std[i].Content = CutContentAt(st.ID, st.Content, l.Cut)
		}
		key, val := "standards", any(std)
		if len(std) == 1 {
			key, val = "standard", std[0]
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		if err := writeJSONPair(&b, key, val); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return json.RawMessage(b.Bytes()), nil
}

func writeJSONPair(b *bytes.Buffer, key string, val any) error {
	k, err := sdk.MarshalCompact(key)
	if err != nil {
		return err
	}
	v, err := sdk.MarshalCompact(val)
	if err != nil {
		return err
	}
	b.Write(k)
	b.WriteByte(':')
	b.Write(v)
	return nil
}

// column is one TOON column: its name and how a row's cell is written.
type column struct {
	name string
	cell func(m *aimemoryv1.Memory, score float64) string
}

// columns are the full toon form's; compact.go has the default form.
func (l Listing) columns() []column {
	str := func(name string, get func(*aimemoryv1.Memory) string) column {
		return column{name, func(m *aimemoryv1.Memory, _ float64) string { return EscapeTOON(get(m)) }}
	}
	num := func(name string, get func(*aimemoryv1.Memory) int64) column {
		return column{name, func(m *aimemoryv1.Memory, _ float64) string { return strconv.FormatInt(get(m), 10) }}
	}
	tim := func(name string, get func(*aimemoryv1.Memory) int64) column {
		return str(name, func(m *aimemoryv1.Memory) string { return record.FormatTime(get(m)) })
	}
	id := str("id", (*aimemoryv1.Memory).GetId)
	title := str("title", (*aimemoryv1.Memory).GetTitle)
	tier := str("tier", (*aimemoryv1.Memory).GetTier)
	ns := str("namespace", (*aimemoryv1.Memory).GetNamespace)
	prio := num("priority", func(m *aimemoryv1.Memory) int64 { return int64(m.GetPriority()) })
	score := column{"score", func(_ *aimemoryv1.Memory, s float64) string {
		return strconv.FormatFloat(Round3(s), 'f', -1, 64)
	}}
	tags := column{"tags", func(m *aimemoryv1.Memory, _ float64) string { return TagsCell(m.GetTags()) }}
	content := str("content", func(m *aimemoryv1.Memory) string { return CutContentAt(m.GetId(), m.GetContent(), l.Cut) })

	conf := column{"confidence", func(m *aimemoryv1.Memory, _ float64) string {
		return strconv.FormatFloat(m.GetConfidence(), 'f', -1, 64)
	}}
	access := num("access_count", (*aimemoryv1.Memory).GetAccessCount)
	source := str("source", (*aimemoryv1.Memory).GetSource)
	meta := str("metadata", func(m *aimemoryv1.Memory) string { return string(MetadataJSON(m.GetMetadataJson())) })
	cols := []column{id, title, tier, ns, prio, conf, score, access, tags, source,
		tim("created_at", (*aimemoryv1.Memory).GetCreatedAt), tim("updated_at", (*aimemoryv1.Memory).GetUpdatedAt),
		meta, content}
	if l.Scores == nil { // list and search have no score: no blank column either
		cols = removeColumn(cols, "score")
	}
	return cols
}

func removeColumn(cols []column, name string) []column {
	out := cols[:0:0]
	for _, c := range cols {
		if c.name != name {
			out = append(out, c)
		}
	}
	return out
}

// TOON renders the full form: the header line, then memories[cols]: and
// one row a memory. Search rows are also headed "memories", as in the
// reference.
func (l Listing) TOON() string {
	var b strings.Builder
	for i, p := range l.Meta {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(p.Key)
		b.WriteByte(':')
		b.WriteString(toonValue(p.Val))
	}
	if len(l.Meta) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(l.standardsTOON(func(id string) string { return id }))
	cols := l.columns()
	b.WriteString("memories[")
	for i, c := range cols {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(c.name)
	}
	b.WriteString("]:")
	for i, m := range l.Memories {
		var score float64
		if l.Scores != nil {
			score = l.Scores[i]
		}
		b.WriteByte('\n')
		for j, c := range cols {
			if j > 0 {
				b.WriteByte('|')
			}
			b.WriteString(c.cell(m, score))
		}
	}
	return b.String()
}

// standardsTOON is the standards block, one line each and a line break
// after: their namespace, id (as id writes it), title and content.
func (l Listing) standardsTOON(id func(string) string) string {
	if len(l.Standards) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("standards[namespace|id|title|content]:\n")
	for _, st := range l.Standards {
		short := id(st.ID)
		b.WriteString(EscapeTOON(st.Namespace) + "|" + short + "|" + EscapeTOON(st.Title) + "|" +
			EscapeTOON(CutContentAt(short, st.Content, l.Cut)) + "\n")
	}
	return b.String()
}

func toonValue(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return strings.ReplaceAll(EscapeTOON(x), ":", `\:`) // the header is key:value
	}
	return ""
}

// toonEscaper backslash-escapes what would break a row: the column
// separator, the escape itself and line breaks. Unlike the reference
// (data-model §1.1) a colon in a row is left alone: it cannot break a row,
// and "https\://" or "ai\:claude" would mislead an agent that copies them
// and cost a token each.
var toonEscaper = strings.NewReplacer(`\`, `\\`, `|`, `\|`, "\n", `\n`, "\r", `\r`)

func EscapeTOON(s string) string { return toonEscaper.Replace(s) }

// TagsCell joins tags with commas; a comma inside a tag is escaped too, so
// the cell splits back into the same tags.
func TagsCell(tags []string) string {
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = strings.ReplaceAll(EscapeTOON(t), ",", `\,`)
	}
	return strings.Join(parts, ",")
}
