package powerfamily

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var consolidateArgs = argNames(consolidateSchema)

// Consolidation: the summary is the caller's, else the chat endpoint's
// when one is configured and answers, else an extractive one (summary.go).
// The engine writes the new memory, links it derived_from to each source
// and archives the sources in one transaction (Archive.Consolidate).
const (
	methodCaller     = "caller"
	methodExtractive = "extractive"
	minConsolidate   = 2
	maxConsolidate   = 100
	maxChatPrompt    = 256 << 10 // larger source sets are summarised here
	previewChars     = 200
)

type consolidateResult struct {
	ID           string `json:"id"`
	Consolidated int    `json:"consolidated"`
	LinksCreated uint32 `json:"links_created"`
	Method       string `json:"method"`
	Reason       string `json:"reason,omitempty"`
	// A generated summary: the first 200 characters, to check it.
	AutoSummary    bool   `json:"auto_summary,omitempty"`
	SummaryPreview string `json:"summary_preview,omitempty"`
	Warning        string `json:"warning,omitempty"`
}

func (s *service) consolidate(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, consolidateArgs)
	if err != nil {
		return nil, err
	}
	ids, err := a.StringList("ids")
	if err != nil {
		return nil, err
	}
	if ids == nil {
		return nil, sdk.Errorf("ids: is required")
	}
	if len(ids) < minConsolidate || len(ids) > maxConsolidate {
		return nil, sdk.Errorf("ids: must hold %d to %d ids (got %d)", minConsolidate, maxConsolidate, len(ids))
	}
	seen := map[string]bool{}
	for i, id := range ids {
		if err := record.ValidateTargetID(fmt.Sprintf("ids[%d]", i), id); err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, sdk.Errorf("ids[%d]: must not repeat an id (%s)", i, record.Quote(id))
		}
		seen[id] = true
	}
	title, err := a.Required("title")
	if err != nil {
		return nil, err
	}
	if err := record.ValidateTitle(title); err != nil {
		return nil, err
	}
	summary, err := a.Str("summary", "")
	if err != nil {
		return nil, err
	}
	_, given := a.Value("summary")
	if given {
		if err := record.ValidateContent(summary); err != nil {
			return nil, sdk.Errorf("summary: %s", ruleOf(err))
		}
	}
	ns, err := a.Namespace("namespace", call.DefaultNamespace())
	if err != nil {
		return nil, err
	}

	// Short ids, which results show, name the same memories as full ids.
	if ids, err = wire.ResolveIDs(ctx, s.eng, ids...); err != nil {
		return nil, sdk.EngineError(err)
	}
	for i, id := range ids {
		if j := slices.Index(ids, id); j < i {
			return nil, sdk.Errorf("ids[%d]: names the same memory as ids[%d] (%s)", i, j, record.Quote(id))
		}
	}
	res := consolidateResult{Method: methodCaller}
	if !given {
		srcs, err := s.sources(ctx, ids)
		if err != nil {
			return nil, err
		}
		summary, res.Method, res.Reason, err = s.summarise(ctx, srcs)
		if err != nil {
			return nil, err
		}
		res.AutoSummary, res.SummaryPreview = true, cutRunes(summary, previewChars)
	}
	resp, err := s.eng.Consolidate(ctx, &aimemoryv1.ConsolidateRequest{Ids: ids, Title: title, Summary: summary, Namespace: ns})
	if p, queued := sdk.PendingFromError(err); queued {
		return p, nil // the namespace policy holds it for approval: nothing was written
	}
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	res.ID, res.Consolidated, res.LinksCreated = resp.GetMemory().GetId(), len(resp.GetArchived()), resp.GetLinksCreated()
	if st := resp.GetStandards(); len(st) > 0 {
		res.Warning = "a source was the standard of " + strings.Join(st, ", ") + "; point it at " + res.ID
	}
	return res, nil
}

// sources fetches the memories to summarise, in ids order; a missing one
// is "ids[i]: memory not found".
func (s *service) sources(ctx context.Context, ids []string) ([]*aimemoryv1.Memory, error) {
	resp, err := s.eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: ids})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	byID := map[string]*aimemoryv1.Memory{}
	for _, m := range resp.GetMemories() {
		byID[m.GetId()] = m
	}
	out := make([]*aimemoryv1.Memory, len(ids))
	for i, id := range ids {
		if out[i] = byID[id]; out[i] == nil {
			return nil, sdk.Errorf("ids[%d]: memory not found: %s", i, id)
		}
	}
	return out, nil
}

// summarise is the chat endpoint's summary of srcs when it gives a usable
// one, else the extractive summary and why the model's was not used.
func (s *service) summarise(ctx context.Context, srcs []*aimemoryv1.Memory) (summary, method, reason string, err error) {
	prompt := summaryPrompt(srcs)
	if len(prompt) > maxChatPrompt {
		reason = fmt.Sprintf("the sources are too long to send to a chat endpoint (%d bytes; at most %d)", len(prompt), maxChatPrompt)
	} else {
		var reply string
		if reply, reason, err = s.ask(ctx, prompt); err != nil {
			return "", "", "", err
		}
		reply = strings.TrimSpace(reply)
		if reply != "" {
			if verr := record.ValidateContent(reply); verr == nil {
				return reply, methodLLM, "", nil
			} else {
				reason = "the chat endpoint's summary: " + ruleOf(verr)
			}
		}
	}
	texts := make([]string, len(srcs))
	for i, m := range srcs {
		texts[i] = m.GetContent()
	}
	function, err := s.functionWords(ctx, strings.Join(texts, "\n"))
	if err != nil {
		return "", "", "", err
	}
	return extractiveSummary(texts, function), methodExtractive, reason, nil
}

// functionWords are the words of text the engine's analyzer drops from
// queries ("the", "what"), as the Corpus API marks them.
func (s *service) functionWords(ctx context.Context, text string) (map[string]bool, error) {
	st, err := s.eng.TermStats(ctx, &aimemoryv1.TermStatsRequest{Text: text})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := map[string]bool{}
	for _, t := range st.GetTerms() {
		if t.GetFunctionWord() {
			out[t.GetWord()] = true
		}
	}
	return out, nil
}

func summaryPrompt(srcs []*aimemoryv1.Memory) string {
	var b strings.Builder
	b.WriteString("Summarise these notes as one concise paragraph that keeps every key fact, decision and technical detail. Answer with the paragraph only.\n")
	for i, m := range srcs {
		fmt.Fprintf(&b, "\nMemory %d: %s\n%s\n", i+1, m.GetTitle(), m.GetContent())
	}
	return b.String()
}

// ruleOf is a field error's rule alone (reported under another field name).
func ruleOf(err error) string {
	if fe, ok := err.(*record.FieldError); ok {
		return fe.Rule
	}
	return err.Error()
}

func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
