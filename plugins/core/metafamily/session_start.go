package metafamily

import (
	"context"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/render"
	"github.com/ai-memory/ai-memory/sdk/tokens"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// format is accepted but not advertised, as on memory_store and
// memory_get: agents read the default; programs ask for json.
var sessionArgs = sdk.ArgNames(sessionSchema, "format")

// Bounds of session_start.
const (
	defaultLimit  = 10
	maxLimit      = 50
	defaultBudget = 2000
	minBudget     = 20 // the empty result's envelope fits
	maxBudget     = 100000
	contentCut    = 1000 // bytes of content shown per memory or standard
)

// sessionResult is memory_session_start's answer in JSON, complete for
// programs (full ids, update times, why each memory was chosen).
type sessionResult struct {
	Mode      string       `json:"mode"`
	Standards []Standard   `json:"standards,omitempty"`
	Memories  []sessionMem `json:"memories"`
	Count     int          `json:"count"`
	Unread    *int         `json:"unread,omitempty"` // absent while no inbox source is known
	More      int          `json:"more,omitempty"`   // candidates left out for the budget
}

// sessionMem is one memory: why says which list chose it.
type sessionMem struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Namespace string `json:"namespace"`
	Tier      string `json:"tier"`
	Priority  int32  `json:"priority"`
	UpdatedAt string `json:"updated_at"`
	Content   string `json:"content"`
	Why       string `json:"why"` // "priority" or "recent"
}

type sessionQuery struct {
	namespace string
	limit     int
	budget    int
	format    string
}

func parseSession(raw []byte) (*sessionQuery, error) {
	a, err := sdk.ParseArgs(raw, sessionArgs)
	if err != nil {
		return nil, err
	}
	q := &sessionQuery{}
	if q.namespace, err = a.NamespaceFilter("namespace"); err != nil {
		return nil, err
	}
	limit, err := a.Integer("limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return nil, err
	}
	budget, err := a.Integer("budget_tokens", defaultBudget, minBudget, maxBudget)
	if err != nil {
		return nil, err
	}
	q.limit, q.budget = int(limit), int(budget)
	if q.format, err = render.FormatArg(a); err != nil {
		return nil, err
	}
	return q, nil
}

// candidate is a memory session_start may show, and which list chose it.
type candidate struct {
	mem *aimemoryv1.Memory
	why string
}

// sessionStart picks what an agent should know on turn one:
//
//  1. the standards of the namespace (most general first);
//  2. memories of the namespace and its ancestors, taken alternately from
//     two lists: the most important (priority desc, then most recently
//     updated) and the most recently updated, without repeats and without
//     the engine's "_" namespaces, up to limit;
//  3. the caller's unread inbox count.
//
// Then it fits the budget: standards and memories are added in that order
// while the whole result, counted with the cl100k counter of
// `doctor --tokens`, stays within budget_tokens; one that does not fit is
// skipped (more counts them) and the next is tried.
//
// The default format is a compact listing (docs/RETRIEVAL.md): short ids,
// the asked namespace and other shared values once, no timestamps and no
// reason per memory; toon adds every field, json is the complete object.
func (s *service) sessionStart(ctx context.Context, call sdk.Call) (any, error) {
	q, err := parseSession(call.Arguments)
	if err != nil {
		return nil, err
	}
	standards, err := s.standards.Standards(ctx, q.namespace)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	r := &session{q: q, caller: call.Caller()}
	if n, known, err := s.inbox.Unread(ctx); err != nil {
		return nil, sdk.EngineError(err)
	} else if known {
		r.unread = &n
	}
	cands, err := s.candidates(ctx, q, standards)
	if err != nil {
		return nil, err
	}
	if q.format == render.TOONCompact {
		ids := make([]string, 0, len(standards)+len(cands))
		for _, st := range standards {
			ids = append(ids, st.ID)
		}
		for _, c := range cands {
			ids = append(ids, c.mem.GetId())
		}
		r.shorts = render.ShortIDsOf(ctx, s.eng, ids...)
	}
	f := &fitter{budget: q.budget, r: r}
	if err := f.start(); err != nil {
		return nil, err
	}
	for _, st := range standards {
		f.add(r.cost(st.ID, st.Namespace, st.Title, st.Content), func() { r.standards = append(r.standards, st) })
	}
	for _, c := range cands {
		f.add(r.cost(c.mem.GetId(), "", c.mem.GetTitle(), c.mem.GetContent()), func() { r.memories = append(r.memories, c) })
	}
	return f.finish(), nil
}

// candidates reads both lists and interleaves them.
func (s *service) candidates(ctx context.Context, q *sessionQuery, standards []Standard) ([]candidate, error) {
	filter := &aimemoryv1.Filter{Namespace: q.namespace, NamespaceAncestors: q.namespace != ""}
	// Ask for more than limit: guarded namespaces and repeats are dropped.
	n := uint32(min(q.limit+8, 2*maxLimit))
	resp, err := s.eng.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Filter: filter, Limit: n, WithRecent: true})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	seen := map[string]bool{} // a standard is shown once, as a standard
	for _, st := range standards {
		seen[st.ID] = true
	}
	var out []candidate
	lists := [2][]*aimemoryv1.Memory{resp.GetMemories(), resp.GetRecent()}
	why := [2]string{"priority", "recent"}
	for i := 0; len(out) < q.limit && (len(lists[0]) > 0 || len(lists[1]) > 0); i = 1 - i {
		if len(lists[i]) == 0 {
			continue
		}
		m := lists[i][0]
		lists[i] = lists[i][1:]
		if seen[m.GetId()] || strings.HasPrefix(m.GetNamespace(), "_") {
			continue
		}
		seen[m.GetId()] = true
		out = append(out, candidate{mem: m, why: why[i]})
	}
	return out, nil
}

// session is one answer being built: what is chosen so far, and how to
// render it in the format asked for.
type session struct {
	q         *sessionQuery
	caller    string
	unread    *int
	shorts    map[string]string // full id → short id, in toon_compact
	standards []Standard
	memories  []candidate
	more      int
}

// text renders the answer.
func (r *session) text() (sdk.Text, error) {
	if r.q.format == render.JSON {
		res := sessionResult{Mode: "session_start", Memories: []sessionMem{}, Count: len(r.memories), Unread: r.unread, More: r.more}
		for _, st := range r.standards {
			st.Content = render.CutContentAt(st.ID, st.Content, contentCut)
			res.Standards = append(res.Standards, st)
		}
		for _, c := range r.memories {
			m := c.mem
			res.Memories = append(res.Memories, sessionMem{
				ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace(), Tier: m.GetTier(), Priority: m.GetPriority(),
				UpdatedAt: record.FormatTime(m.GetUpdatedAt()), Content: render.CutContentAt(m.GetId(), m.GetContent(), contentCut), Why: c.why,
			})
		}
		raw, err := sdk.MarshalCompact(res)
		return sdk.Text(raw), err
	}
	meta := []render.Pair{{Key: "count", Val: len(r.memories)}}
	if r.unread != nil {
		meta = append(meta, render.Pair{Key: "unread", Val: *r.unread})
	}
	if r.more > 0 {
		meta = append(meta, render.Pair{Key: "more", Val: r.more})
	}
	l := render.Listing{Meta: meta, Key: "memories", Namespace: r.q.namespace, Caller: r.caller,
		Standards: r.standards, Cut: contentCut, ShortIDs: r.shorts}
	for _, c := range r.memories {
		l.Memories = append(l.Memories, c.mem)
	}
	if r.q.format == render.TOON {
		return sdk.Text(l.TOON()), nil
	}
	return sdk.Text(l.Compact()), nil
}

// cost estimates what one standard or memory adds to the answer: its JSON
// object, or its TOON row (the rest of a row's cells cost little).
func (r *session) cost(id, namespace, title, content string) int {
	content = render.CutContentAt(id, content, contentCut)
	if r.q.format == render.JSON {
		raw, err := sdk.MarshalCompact(sessionMem{ID: id, Namespace: namespace, Title: title, Content: content})
		if err != nil {
			return r.q.budget + 1
		}
		return tokens.Count(string(raw)) + 25 // tier, priority, updated_at, why
	}
	row := render.Short(r.shorts, id) + "|" + render.EscapeTOON(title) + "|" + render.EscapeTOON(content)
	if namespace != "" {
		row = render.EscapeTOON(namespace) + "|" + row
	}
	return tokens.Count(row) + 3
}

// fitter grows an answer within budget. A part's cost is an estimate
// (cl100k often merges across the seams between parts), so finish counts
// the whole rendering exactly, dropping the last parts while it is over.
type fitter struct {
	budget, used int
	r            *session
}

func (f *fitter) start() error {
	n, _ := f.render()
	if n > f.budget {
		return sdk.Errorf("budget_tokens: must be at least %d for this result's envelope (got %d)", n, f.budget)
	}
	f.used = n
	return nil
}

// add applies a part when its cost still fits, else counts it as left out.
func (f *fitter) add(cost int, apply func()) {
	if f.used+cost+1 > f.budget {
		f.r.more++
		return
	}
	apply()
	f.used += cost + 1
}

// finish is the answer's text, its exact count within budget.
func (f *fitter) finish() sdk.Text {
	r := f.r
	for {
		n, text := f.render()
		if n <= f.budget {
			return text
		}
		switch {
		case len(r.memories) > 0:
			r.memories = r.memories[:len(r.memories)-1]
		case len(r.standards) > 0:
			r.standards = r.standards[:len(r.standards)-1]
		default:
			return text // start checked that the envelope fits
		}
		r.more++
	}
}

// render is the answer's text and its exact token count.
func (f *fitter) render() (int, sdk.Text) {
	text, err := f.r.text()
	if err != nil {
		return f.budget + 1, ""
	}
	return tokens.Count(string(text)), text
}
