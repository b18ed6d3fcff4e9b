package render

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Compact renders the default format, toon_compact, at close to the cost
// of the memories' own titles and contents:
//
//	count:2
//	all[namespace]:org/team
//	memories[id|title|priority|tags|content]:
//	1f3a9c2e|Deploy rule|8|deploy|Never deploy on a Friday.
//	9b07d4a1|Lunch|||Team lunch is on Thursdays.
//
// Ids are the shortest unique prefixes, which every tool taking an id
// accepts. A value every row of several shares is stated once on the all[...] line,
// or not at all when it says nothing: the default (tier mid, priority 5,
// namespace global), the namespace the call asked for, or the caller's own
// agent id. Otherwise a cell holding the default is left empty, and a
// column empty in every row is left out. Rows come best first and carry no
// score: with the content inline, a score tells an agent little that the
// order does not, and it cost two tokens a row (json and toon keep it).
// The header leaves out mode (always keyword) and tokens_used unless a
// budget was asked for. Standards, when any apply, come before the
// memories with their short ids.
func (l Listing) Compact() string {
	var b strings.Builder
	first := true
	for _, p := range l.Meta {
		if (p.Key == "mode" && p.Val == "keyword") || (p.Key == "tokens_used" && !l.Budgeted) {
			continue
		}
		if !first {
			b.WriteByte('|')
		}
		first = false
		b.WriteString(p.Key)
		b.WriteByte(':')
		b.WriteString(toonValue(p.Val))
	}

	type optional struct {
		name   string
		dflt   string // shown as an empty cell
		silent string // a value that, shared by every row, says nothing either
		get    func(*aimemoryv1.Memory) string
	}
	opts := []optional{
		{"tier", record.DefaultTier, "", func(m *aimemoryv1.Memory) string { return EscapeTOON(m.GetTier()) }},
		{"namespace", record.DefaultNamespace, l.Namespace, func(m *aimemoryv1.Memory) string { return EscapeTOON(m.GetNamespace()) }},
		{"priority", strconv.Itoa(record.DefaultPriority), "", func(m *aimemoryv1.Memory) string { return strconv.Itoa(int(m.GetPriority())) }},
		{"tags", "", "", func(m *aimemoryv1.Memory) string { return TagsCell(m.GetTags()) }},
		{"agent_id", "", l.Caller, func(m *aimemoryv1.Memory) string {
			return EscapeTOON(MetadataString(m.GetMetadataJson(), "agent_id"))
		}},
	}
	cells := map[string][]string{}
	var shared, sharedVals []string
	for _, o := range opts {
		if len(l.Memories) == 0 {
			break
		}
		col := make([]string, len(l.Memories))
		same, empty := true, true
		for i, m := range l.Memories {
			col[i] = o.get(m)
			same = same && col[i] == col[0]
		}
		value := col[0]
		for i := range col {
			if col[i] == o.dflt {
				col[i] = ""
			}
			empty = empty && col[i] == ""
		}
		switch {
		case same && (empty || value == o.silent):
		case same && len(l.Memories) > 1:
			shared = append(shared, o.name)
			sharedVals = append(sharedVals, value)
		default:
			cells[o.name] = col
		}
	}
	if len(shared) > 0 {
		b.WriteString("\nall[" + strings.Join(shared, "|") + "]:" + strings.Join(sharedVals, "|"))
	}

	names := []string{"id", "title"}
	for _, n := range []string{"tier", "namespace", "priority", "tags", "agent_id"} {
		if cells[n] != nil {
			names = append(names, n)
		}
	}
	names = append(names, "content")
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(l.standardsTOON(l.shortID))
	b.WriteString("memories[" + strings.Join(names, "|") + "]:")
	for i, m := range l.Memories {
		b.WriteByte('\n')
		id := l.shortID(m.GetId())
		for j, n := range names {
			if j > 0 {
				b.WriteByte('|')
			}
			switch n {
			case "id":
				b.WriteString(id)
			case "title":
				b.WriteString(EscapeTOON(m.GetTitle()))
			case "content":
				b.WriteString(EscapeTOON(CutContentAt(id, m.GetContent(), l.Cut)))
			default:
				b.WriteString(cells[n][i])
			}
		}
	}
	return b.String()
}

// shortID is id's shortest unique prefix when known, else id.
func (l Listing) shortID(id string) string { return Short(l.ShortIDs, id) }

// MinShortID is the shortest id prefix results show: the shortest a tool
// that changes or removes a memory accepts.
const MinShortID = record.MinTargetID

// ShortIDLength is what a Listing asks the engine for alongside its
// memories: their short ids when the format shows them (toon_compact), so
// the result costs one engine read, not two.
func ShortIDLength(format string) uint32 {
	if format == TOONCompact {
		return MinShortID
	}
	return 0
}

// WithShortIDs records the short ids the engine answered, one per memory of
// l in order; an empty one (not asked for) leaves the full id.
func (l *Listing) WithShortIDs(shorts []string) {
	ids := make([]string, len(l.Memories))
	for i, m := range l.Memories {
		ids[i] = m.GetId()
	}
	l.ShortIDs = AddShortIDs(l.ShortIDs, ids, shorts)
}

// AddShortIDs adds ids[i] → shorts[i] to m (made if nil) and returns it; an
// empty short id, or one past ids, is skipped.
func AddShortIDs(m map[string]string, ids, shorts []string) map[string]string {
	for i, short := range shorts {
		if i >= len(ids) || short == "" {
			continue
		}
		if m == nil {
			m = make(map[string]string, len(shorts))
		}
		m[ids[i]] = short
	}
	return m
}

// shortIDReader is the engine call ShortIDsOf needs.
type shortIDReader interface {
	ShortIds(ctx context.Context, in *aimemoryv1.ShortIdsRequest, opts ...grpc.CallOption) (*aimemoryv1.ShortIdsResponse, error)
}

// ShortIDsOf asks the engine for the short ids of ids (full id → short id),
// for results that show ids outside a listing (a store's answer, links,
// standards). Best effort: on a failed read it returns nil and the result
// shows full ids, which are as good, only longer.
func ShortIDsOf(ctx context.Context, eng shortIDReader, ids ...string) map[string]string {
	var ask []string
	for _, id := range ids {
		if id != "" && !slices.Contains(ask, id) {
			ask = append(ask, id)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	resp, err := eng.ShortIds(ctx, &aimemoryv1.ShortIdsRequest{Ids: ask, MinLength: MinShortID})
	if err != nil {
		return nil
	}
	return AddShortIDs(nil, ask, resp.GetPrefixes())
}

// Short is id's short form in shorts, else id.
func Short(shorts map[string]string, id string) string {
	if s, ok := shorts[id]; ok {
		return s
	}
	return id
}
