package metafamily

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
)

var sessionArgs = sdk.ArgNames(sessionSchema)

// Bounds of session_start.
const (
	defaultLimit  = 10
	maxLimit      = 50
	defaultBudget = 2000
	minBudget     = 20 // the empty result's envelope fits
	maxBudget     = 100000
	contentCut    = 1000 // bytes of content shown per memory or standard
)

// sessionResult is memory_session_start's answer. Its whole JSON text, as
// sent, is at most budget_tokens cl100k tokens.
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
	return q, nil
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
func (s *service) sessionStart(ctx context.Context, call sdk.Call) (any, error) {
	q, err := parseSession(call.Arguments)
	if err != nil {
		return nil, err
	}
	standards, err := s.standards.Standards(ctx, q.namespace)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	res := &sessionResult{Mode: "session_start", Memories: []sessionMem{}}
	if n, known, err := s.inbox.Unread(ctx); err != nil {
		return nil, sdk.EngineError(err)
	} else if known {
		res.Unread = &n
	}
	cands, err := s.candidates(ctx, q, standards)
	if err != nil {
		return nil, err
	}
	f := &fitter{budget: q.budget, res: res}
	if err := f.start(); err != nil {
		return nil, err
	}
	for _, st := range standards {
		st.Content = cut(st.ID, st.Content)
		f.add(st, func() { res.Standards = append(res.Standards, st) })
	}
	for _, m := range cands {
		f.add(m, func() { res.Memories, res.Count = append(res.Memories, m), res.Count+1 })
	}
	return f.finish(), nil
}

// candidates reads both lists and interleaves them.
func (s *service) candidates(ctx context.Context, q *sessionQuery, standards []Standard) ([]sessionMem, error) {
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
	var out []sessionMem
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
		out = append(out, sessionMem{
			ID: m.GetId(), Title: m.GetTitle(), Namespace: m.GetNamespace(), Tier: m.GetTier(), Priority: m.GetPriority(),
			UpdatedAt: record.FormatTime(m.GetUpdatedAt()), Content: cut(m.GetId(), m.GetContent()), Why: why[i],
		})
	}
	return out, nil
}

// fitter grows a result within budget. A part's cost is its own count
// plus its comma; cl100k usually merges across the seams between parts
// (`"},{"`), so the sum tends to overestimate, and finish counts the
// whole rendering exactly, dropping the last parts while it is over.
type fitter struct {
	budget, used int
	res          *sessionResult
	skipped      int
}

func (f *fitter) start() error {
	n, _ := f.render()
	if n > f.budget {
		return sdk.Errorf("budget_tokens: must be at least %d for this result's envelope (got %d)", n, f.budget)
	}
	f.used = n
	return nil
}

// add applies a part when its cost still fits, else counts it as skipped.
func (f *fitter) add(part any, apply func()) {
	raw, err := sdk.MarshalCompact(part)
	if err != nil {
		f.skipped++
		return
	}
	n := sdk.CountTokens(string(raw))
	if f.used+n+1 > f.budget {
		f.skipped++
		return
	}
	apply()
	f.used += n + 1
}

// finish is the result's text, its exact count within budget.
func (f *fitter) finish() sdk.Text {
	r := f.res
	r.More = f.skipped
	for {
		n, text := f.render()
		if n <= f.budget {
			return text
		}
		switch {
		case len(r.Memories) > 0:
			r.Memories, r.Count = r.Memories[:len(r.Memories)-1], r.Count-1
		case len(r.Standards) > 0:
			r.Standards = r.Standards[:len(r.Standards)-1]
		default:
			return text // start checked that the envelope fits
		}
		r.More++
	}
}

// render is the result's JSON text and its exact token count.
func (f *fitter) render() (int, sdk.Text) {
	raw, err := sdk.MarshalCompact(f.res)
	if err != nil {
		return f.budget + 1, ""
	}
	return sdk.CountTokens(string(raw)), sdk.Text(raw)
}

// cut shortens content to contentCut bytes on a UTF-8 boundary and says
// how to read the rest.
func cut(id, content string) string {
	if len(content) <= contentCut {
		return content
	}
	n := contentCut
	for n > 0 && !utf8.RuneStart(content[n]) {
		n--
	}
	return fmt.Sprintf("%s…[%d more bytes; memory_get %s]", content[:n], len(content)-n, id)
}
