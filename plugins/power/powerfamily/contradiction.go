package powerfamily

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

var contradictionArgs = argNames(contradictionSchema)

// Contradiction checks with no model: a heuristic pass over the two
// contents (never the titles, as the reference) that looks for what a
// contradiction between notes usually is: a different number or version
// for the same thing ("port 8080" / "port 9090"), a statement and its
// negation, or opposite words ("enable" / "disable") in otherwise alike
// sentences. Its precision is low (spec §8), so it never says "no": the
// verdict is "likely" when it found such a signal on a shared subject,
// and "unknown" otherwise. With a chat endpoint the model's yes or no is
// the verdict ("contradicts" or "consistent", method llm).
const (
	methodHeuristic  = "heuristic"
	minSubjectShare  = 0.2 // share of the smaller memory's content terms the other holds
	minSentenceShare = 0.5 // Jaccard of two sentences' content words to compare them
	maxSignals       = 5
	quoteChars       = 60
)

type memoryRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type contradictionResult struct {
	Method  string    `json:"method"`
	Reason  string    `json:"reason,omitempty"`
	Verdict string    `json:"verdict"`
	Overlap float64   `json:"overlap,omitempty"`
	Signals []string  `json:"signals,omitempty"`
	MemoryA memoryRef `json:"memory_a"`
	MemoryB memoryRef `json:"memory_b"`
}

func (s *service) detectContradiction(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, contradictionArgs)
	if err != nil {
		return nil, err
	}
	ma, err := s.memoryArg(ctx, a, "id_a")
	if err != nil {
		return nil, err
	}
	mb, err := s.memoryArg(ctx, a, "id_b")
	if err != nil {
		return nil, err
	}
	refs := func(r contradictionResult) contradictionResult {
		r.MemoryA = memoryRef{ID: ma.GetId(), Title: ma.GetTitle()}
		r.MemoryB = memoryRef{ID: mb.GetId(), Title: mb.GetTitle()}
		return r
	}
	reply, reason, err := s.ask(ctx, contradictionPrompt(ma.GetContent(), mb.GetContent()))
	if err != nil {
		return nil, err
	}
	first := ""
	if ws := strings.FieldsFunc(strings.ToLower(reply), func(r rune) bool { return !unicode.IsLetter(r) }); len(ws) > 0 {
		first = ws[0]
	}
	switch {
	case first == "yes":
		return refs(contradictionResult{Method: methodLLM, Verdict: "contradicts"}), nil
	case first == "no":
		return refs(contradictionResult{Method: methodLLM, Verdict: "consistent"}), nil
	case reply != "":
		reason = "the chat endpoint answered neither yes nor no"
	}
	ta, err := s.eng.TermStats(ctx, &aimemoryv1.TermStatsRequest{Text: ma.GetContent()})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	tb, err := s.eng.TermStats(ctx, &aimemoryv1.TermStatsRequest{Text: mb.GetContent()})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	function := map[string]bool{}
	for _, st := range [...]*aimemoryv1.TermStatsResponse{ta, tb} {
		for _, t := range st.GetTerms() {
			if t.GetFunctionWord() {
				function[t.GetWord()] = true
			}
		}
	}
	res := refs(contradictionResult{
		Method:  methodHeuristic,
		Reason:  reason,
		Verdict: "unknown",
		Overlap: math.Round(subjectOverlap(ta, tb)*1000) / 1000,
	})
	if res.Overlap >= minSubjectShare {
		h := heuristics{function: function}
		res.Signals = h.signals(ma.GetContent(), mb.GetContent())
		if len(res.Signals) > 0 {
			res.Verdict = "likely"
		}
	}
	return res, nil
}

// subjectOverlap is the share of the smaller text's content terms that the
// other text holds too.
func subjectOverlap(a, b *aimemoryv1.TermStatsResponse) float64 {
	set := func(st *aimemoryv1.TermStatsResponse) map[string]bool {
		m := map[string]bool{}
		for _, t := range st.GetTerms() {
			if !t.GetFunctionWord() && tagWord(t.GetWord()) {
				m[t.GetTerm()] = true
			}
		}
		return m
	}
	sa, sb := set(a), set(b)
	if len(sa) > len(sb) {
		sa, sb = sb, sa
	}
	if len(sa) == 0 {
		return 0
	}
	n := 0
	for t := range sa {
		if sb[t] {
			n++
		}
	}
	return float64(n) / float64(len(sa))
}

// heuristics holds the function words (from the engine's analyzer, as the
// Corpus API marks them) that carry no subject.
type heuristics struct{ function map[string]bool }

var (
	tokenRE    = regexp.MustCompile(`[\p{L}\p{N}_]+(?:\.[\p{L}\p{N}]+)*`)
	valueRE    = regexp.MustCompile(`^v?\d+(?:\.\d+)*[a-z%]{0,3}$`)
	sentenceRE = regexp.MustCompile(`[.!?;\n]+(?:\s|$)`)
	negations  = map[string]bool{"not": true, "no": true, "never": true, "none": true, "cannot": true, "without": true, "nothing": true, "neither": true, "nor": true}
	opposites  = map[string]string{}
)

func init() {
	for _, p := range [][2]string{
		{"enable", "disable"}, {"enabled", "disabled"}, {"allow", "deny"}, {"allowed", "denied"},
		{"true", "false"}, {"always", "never"}, {"increase", "decrease"}, {"required", "optional"},
		{"sync", "async"}, {"synchronous", "asynchronous"}, {"before", "after"}, {"accept", "reject"},
		{"include", "exclude"}, {"public", "private"}, {"start", "stop"}, {"open", "closed"},
		{"valid", "invalid"}, {"use", "avoid"}, {"supported", "unsupported"}, {"works", "fails"},
		{"safe", "unsafe"}, {"more", "less"}, {"higher", "lower"}, {"faster", "slower"},
	} {
		opposites[p[0]], opposites[p[1]] = p[1], p[0]
	}
}

// tokens lowercases text, spells "n't" as " not", and splits it into words
// (versions such as 1.2.3 kept whole).
func tokens(text string) []string {
	t := strings.ToLower(text)
	t = strings.NewReplacer("n't", " not", "n’t", " not", "cannot", "can not").Replace(t)
	return tokenRE.FindAllString(t, -1)
}

// stem is a crude prefix stem, enough to match "deploy" and "deploys"
// inside two sentences.
func stem(w string) string {
	if r := []rune(w); len(r) > 5 {
		return string(r[:5])
	}
	return w
}

func (h heuristics) content(w string) bool {
	return !h.function[w] && !negations[w] && !valueRE.MatchString(w) && len(w) >= 2
}

func (h heuristics) signals(a, b string) []string {
	var out []string
	add := func(s string) {
		if len(out) < maxSignals && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range h.valueConflicts(a, b) {
		add(s)
	}
	for _, sa := range sentences(a) {
		for _, sb := range sentences(b) {
			if s := h.sentenceConflict(sa, sb); s != "" {
				add(s)
			}
		}
	}
	return out
}

// valueConflicts: the same thing (one of the two content words before a
// number or version) given values with none in common.
func (h heuristics) valueConflicts(a, b string) []string {
	va, vb := h.values(a), h.values(b)
	var keys []string
	for k := range va {
		if _, ok := vb[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		x, y := va[k], vb[k]
		if !slices.ContainsFunc(x.vals, func(v string) bool { return slices.Contains(y.vals, v) }) {
			out = append(out, fmt.Sprintf("%s: %s vs %s", x.word, strings.Join(x.vals, ","), strings.Join(y.vals, ",")))
		}
	}
	return out
}

type keyed struct {
	word string
	vals []string
}

// values maps each content word (stemmed) seen just before a number or
// version to those values.
func (h heuristics) values(text string) map[string]*keyed {
	out := map[string]*keyed{}
	ts := tokens(text)
	for i, t := range ts {
		if !valueRE.MatchString(t) {
			continue
		}
		seen := 0
		for j := i - 1; j >= 0 && j >= i-4 && seen < 2; j-- {
			if !h.content(ts[j]) {
				continue
			}
			seen++
			k := stem(ts[j])
			if out[k] == nil {
				out[k] = &keyed{word: ts[j]}
			}
			if !slices.Contains(out[k].vals, t) {
				out[k].vals = append(out[k].vals, t)
			}
		}
	}
	return out
}

func sentences(text string) []string {
	var out []string
	for _, s := range sentenceRE.Split(text, -1) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sentenceConflict: two alike sentences of which one is negated, or which
// use opposite words.
func (h heuristics) sentenceConflict(a, b string) string {
	ta, tb := tokens(a), tokens(b)
	ka, kb := h.keys(ta), h.keys(tb)
	var flip string
	for w := range ka {
		if o, ok := opposites[w]; ok && kb[o] && !kb[w] && !ka[o] {
			flip = w + "/" + o
			delete(ka, w)
			delete(kb, o)
			break
		}
	}
	if sentenceShare(ka, kb) < minSentenceShare {
		return ""
	}
	quoted := fmt.Sprintf("%q vs %q", cut(a), cut(b))
	if flip != "" {
		return "opposites " + flip + ": " + quoted
	}
	if negated(ta) != negated(tb) {
		return "negation: " + quoted
	}
	return ""
}

// keys is a sentence's content words, crudely stemmed; opposite words
// are kept whole so they can be found.
func (h heuristics) keys(ts []string) map[string]bool {
	out := map[string]bool{}
	for _, t := range ts {
		switch {
		case opposites[t] != "":
			out[t] = true
		case h.content(t):
			out[stem(t)] = true
		}
	}
	return out
}

func sentenceShare(a, b map[string]bool) float64 {
	if len(a) < 2 || len(b) < 2 {
		return 0 // too little to say two sentences are about one thing
	}
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return float64(n) / float64(len(a)+len(b)-n)
}

func negated(ts []string) bool {
	n := 0
	for _, t := range ts {
		if negations[t] {
			n++
		}
	}
	return n%2 == 1
}

func cut(s string) string {
	if r := []rune(s); len(r) > quoteChars {
		return string(r[:quoteChars]) + "…"
	}
	return s
}
