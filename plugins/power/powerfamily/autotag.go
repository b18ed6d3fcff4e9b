package powerfamily

import (
	"context"
	"strings"
	"unicode"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var autoTagArgs = argNames(autoTagSchema)

// Tagging with no model: tags grounded in the corpus. In order of
// preference: tags the store already uses whose words the memory spells
// out; tags its nearest keyword neighbours share (used by two or more of
// them); then the memory's own heaviest tf-idf terms that other memories
// hold too (a term found nowhere else groups nothing). At most maxNewTags
// are added; the memory's tags stay first, in their order.
const (
	methodTFIDF    = "tfidf"
	maxNewTags     = 5
	tagNeighbours  = 10
	tagQueryTerms  = 12
	minTagWordSize = 3
)

type autoTagResult struct {
	ID      string   `json:"id"`
	Method  string   `json:"method"`
	Reason  string   `json:"reason,omitempty"`
	NewTags []string `json:"new_tags"`
	AllTags []string `json:"all_tags"`
}

func (s *service) autoTag(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, autoTagArgs)
	if err != nil {
		return nil, err
	}
	id, err := a.TargetID("id") // the tags it finds are written
	if err != nil {
		return nil, err
	}
	m, err := s.memoryByID(ctx, "id", id)
	if err != nil {
		return nil, err
	}
	method := methodTFIDF
	reply, reason, err := s.ask(ctx, tagPrompt(m))
	if err != nil {
		return nil, err
	}
	suggested := replyLines(reply)
	if len(suggested) > 0 {
		method = methodLLM
	} else {
		if reply != "" {
			reason = "the chat endpoint's answer held no tag"
		}
		if suggested, err = s.suggestTags(ctx, m); err != nil {
			return nil, err
		}
	}
	have := map[string]bool{}
	for _, t := range m.GetTags() {
		have[strings.ToLower(t)] = true
	}
	all := append([]string(nil), m.GetTags()...)
	added := []string{}
	for _, t := range suggested {
		if len(added) == maxNewTags || len(all) == record.MaxTags {
			break
		}
		if have[strings.ToLower(t)] || record.ValidateTags("tag", []string{t}) != nil {
			continue
		}
		have[strings.ToLower(t)] = true
		all = append(all, t)
		added = append(added, t)
	}
	if len(added) > 0 {
		resp, err := s.eng.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.GetId(), SetTags: true, Tags: all})
		if err != nil {
			return nil, sdk.EngineError(err)
		}
		all = resp.GetMemory().GetTags()
	}
	return autoTagResult{ID: m.GetId(), Method: method, Reason: reason, NewTags: added, AllTags: all}, nil
}

// suggestTags lists candidate tags for m, best first (see the consts).
func (s *service) suggestTags(ctx context.Context, m *aimemoryv1.Memory) ([]string, error) {
	text := m.GetTitle() + "\n" + m.GetContent()
	terms, st, err := s.keyTerms(ctx, text, true)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range st.GetTags() {
		out = append(out, t.GetTag())
	}
	neighbourTags, err := s.neighbourTags(ctx, m, terms)
	if err != nil {
		return nil, err
	}
	out = append(out, neighbourTags...)
	for _, t := range terms {
		if t.df >= 2 && tagWord(t.word) {
			out = append(out, t.word)
		}
	}
	return out, nil
}

// neighbourTags is the tags shared by two or more of m's nearest keyword
// neighbours, most shared first.
func (s *service) neighbourTags(ctx context.Context, m *aimemoryv1.Memory, terms []keyTerm) ([]string, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	ws := make([]string, 0, tagQueryTerms)
	for _, t := range terms[:min(len(terms), tagQueryTerms)] {
		ws = append(ws, t.word)
	}
	found, err := s.eng.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{
		Query: strings.Join(ws, " "), Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL,
		Limit: tagNeighbours + 1,
	})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	count := map[string]int{}
	var order []string
	for _, r := range found.GetResults() {
		if r.GetMemory().GetId() == m.GetId() {
			continue
		}
		for _, t := range r.GetMemory().GetTags() {
			if count[t] == 0 {
				order = append(order, t)
			}
			count[t]++
		}
	}
	var out []string
	for n := tagNeighbours; n >= 2; n-- {
		for _, t := range order {
			if count[t] == n {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// tagWord: a word worth a tag (three or more characters, not a number).
func tagWord(w string) bool {
	if len(w) < minTagWordSize {
		return false
	}
	return strings.IndexFunc(w, unicode.IsLetter) >= 0
}

// memoryArg reads a required memory id (or unique prefix) and fetches the
// memory; a missing one is "memory not found: <id>".
func (s *service) memoryArg(ctx context.Context, a *sdk.Args, name string) (*aimemoryv1.Memory, error) {
	id, err := a.Required(name)
	if err != nil {
		return nil, err
	}
	if err := record.ValidateID(name, id); err != nil {
		return nil, err
	}
	return s.memoryByID(ctx, name, id)
}

// memoryByID fetches the memory id (or unique prefix) of argument name.
func (s *service) memoryByID(ctx context.Context, name, id string) (*aimemoryv1.Memory, error) {
	resp, err := s.eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}, AllowPrefix: true})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	if len(resp.GetMemories()) == 0 {
		return nil, sdk.Errorf("%s: memory not found: %s", name, id)
	}
	return resp.GetMemories()[0], nil
}
