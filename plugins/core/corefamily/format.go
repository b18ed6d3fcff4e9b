package corefamily

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Output formats of recall, list and search (data-model §1.1).
const (
	formatTOONCompact = "toon_compact"
	formatTOON        = "toon"
	formatJSON        = "json"
)

// formatArg reads the format argument; the default is the cheapest form.
func formatArg(a *sdk.Args) (string, error) {
	return a.OneOf("format", formatTOONCompact, formatTOONCompact, formatTOON, formatJSON)
}

// pair is one key of a result's header, in output order.
type pair struct {
	key string
	val any // int, int64, string or bool
}

// listing is a list-like result (recall, list, search) before rendering.
type listing struct {
	meta   []pair
	key    string // JSON key of the rows: "memories" or "results"
	mems   []*aimemoryv1.Memory
	scores []float64 // one per memory, or nil: no score anywhere
	// What the compact form leaves out or shortens: the namespace the call
	// asked for (each row's would repeat it), and short ids (full id →
	// shortest unique prefix; nil = full ids).
	namespace string
	shortIDs  map[string]string
	caller    string        // the session's agent id: shared by every row, it says nothing
	budgeted  bool          // a token budget was asked for: tokens_used matters
	standards []standardRow // recall: the namespace standards injected (standards.go)
}

// render returns the result in format: a JSON object, or TOON text.
func (l listing) render(format string) (any, error) {
	switch format {
	case formatJSON:
		return l.json()
	case formatTOONCompact:
		return textResult(l.compact()), nil
	}
	return textResult(l.toon()), nil
}

// textResult is how a handler answers with plain text (sent unencoded).
func textResult(s string) any { return sdk.Text(s) }

// json renders {meta..., key: [views]} with keys in a fixed order.
func (l listing) json() (any, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range l.meta {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONPair(&b, p.key, p.val); err != nil {
			return nil, err
		}
	}
	if len(l.mems) > 0 {
		views := make([]memoryView, len(l.mems))
		for i, m := range l.mems {
			views[i] = newView(m, true)
			if l.scores != nil {
				s := round3(l.scores[i])
				views[i].Score = &s
			}
		}
		if len(l.meta) > 0 {
			b.WriteByte(',')
		}
		if err := writeJSONPair(&b, l.key, views); err != nil {
			return nil, err
		}
	}
	if len(l.standards) > 0 {
		key, val := "standards", any(l.standards)
		if len(l.standards) == 1 {
			key, val = "standard", l.standards[0]
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
func (l listing) columns() []column {
	str := func(name string, get func(*aimemoryv1.Memory) string) column {
		return column{name, func(m *aimemoryv1.Memory, _ float64) string { return escapeTOON(get(m)) }}
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
		return strconv.FormatFloat(round3(s), 'f', -1, 64)
	}}
	tags := column{"tags", func(m *aimemoryv1.Memory, _ float64) string { return tagsCell(m.GetTags()) }}
	content := str("content", func(m *aimemoryv1.Memory) string { return cutContent(m.GetId(), m.GetContent()) })

	conf := column{"confidence", func(m *aimemoryv1.Memory, _ float64) string {
		return strconv.FormatFloat(m.GetConfidence(), 'f', -1, 64)
	}}
	access := num("access_count", (*aimemoryv1.Memory).GetAccessCount)
	source := str("source", (*aimemoryv1.Memory).GetSource)
	meta := str("metadata", func(m *aimemoryv1.Memory) string { return string(metadataJSON(m.GetMetadataJson())) })
	cols := []column{id, title, tier, ns, prio, conf, score, access, tags, source,
		tim("created_at", (*aimemoryv1.Memory).GetCreatedAt), tim("updated_at", (*aimemoryv1.Memory).GetUpdatedAt),
		meta, content}
	if l.scores == nil { // list and search have no score: no blank column either
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

// toon renders the full form: the header line, then memories[cols]: and
// one row a memory. Search rows are also headed "memories", as in the
// reference.
func (l listing) toon() string {
	var b strings.Builder
	for i, p := range l.meta {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(p.key)
		b.WriteByte(':')
		b.WriteString(toonValue(p.val))
	}
	b.WriteByte('\n')
	cols := l.columns()
	b.WriteString("memories[")
	for i, c := range cols {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(c.name)
	}
	b.WriteString("]:")
	for i, m := range l.mems {
		var score float64
		if l.scores != nil {
			score = l.scores[i]
		}
		b.WriteByte('\n')
		for j, c := range cols {
			if j > 0 {
				b.WriteByte('|')
			}
			b.WriteString(c.cell(m, score))
		}
	}
	b.WriteString(standardsTOON(l.standards))
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
		return strings.ReplaceAll(escapeTOON(x), ":", `\:`) // the header is key:value
	}
	return ""
}

// toonEscaper backslash-escapes what would break a row: the column
// separator, the escape itself and line breaks. Unlike the reference
// (data-model §1.1) a colon in a row is left alone: it cannot break a row,
// and "https\://" or "ai\:claude" would mislead an agent that copies them
// and cost a token each.
var toonEscaper = strings.NewReplacer(`\`, `\\`, `|`, `\|`, "\n", `\n`, "\r", `\r`)

func escapeTOON(s string) string { return toonEscaper.Replace(s) }

// tagsCell joins tags with commas; a comma inside a tag is escaped too, so
// the cell splits back into the same tags.
func tagsCell(tags []string) string {
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = strings.ReplaceAll(escapeTOON(t), ",", `\,`)
	}
	return strings.Join(parts, ",")
}
