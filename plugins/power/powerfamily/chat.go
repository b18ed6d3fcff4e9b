package powerfamily

import (
	"context"
	"strings"
	"unicode"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// With a chat endpoint configured for the data dir ([models.chat]), the
// tools that can use a model ask it first (the engine checks each prompt
// for secrets before it leaves the machine) and name method "llm"; when
// it is down, slow, says something unusable or the text looks like it
// holds a secret, they use their classical method and say why in reason.
const methodLLM = "llm"

// ask is the chat endpoint's reply, or "" and the reason there is none
// ("" too when no endpoint is configured: the classical method is the
// configured one, nothing to explain).
func (s *service) ask(ctx context.Context, prompt string) (text, reason string, err error) {
	resp, err := s.eng.Chat(ctx, &aimemoryv1.ChatRequest{Prompt: prompt})
	if err != nil {
		return "", "", sdk.EngineError(err)
	}
	return resp.GetText(), resp.GetReason(), nil
}

// replyLines is a reply's non-empty lines, list debris stripped ("- x",
// "1. x", "#x", trailing punctuation), lowercased, first of each kept.
func replyLines(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimLeftFunc(l, func(r rune) bool { return unicode.IsDigit(r) || strings.ContainsRune("-*•#.) \t", r) })
		l = strings.TrimRightFunc(l, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
		l = strings.ToLower(l)
		if l != "" && len(l) <= 64 && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

func tagPrompt(m *aimemoryv1.Memory) string {
	return "Suggest 3 to 5 short lowercase tags for this note, one per line, no symbols or numbering.\n\nTitle: " +
		m.GetTitle() + "\nContent: " + m.GetContent()
}

func expandPrompt(q string) string {
	return "Give 5 to 8 search terms related to this query, one per line, no numbering.\n\nQuery: " + q
}

func contradictionPrompt(a, b string) string {
	return "Does statement A contradict statement B? Answer only yes or no.\n\nA: " + a + "\n\nB: " + b
}
