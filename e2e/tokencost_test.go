package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/tokencost"
)

// tokenCostMemories are ten memories of the kind a coding agent keeps:
// decisions, conventions and facts about one project, 20 to 90 words.
var tokenCostMemories = []struct {
	title, content string
	tags           []string
	priority       int
}{
	{"Billing service deploys", "The billing service deploys through `make release` from the main branch only. Releases go out Tuesday to Thursday; never deploy billing on a Friday, because the payment provider's support desk is closed at weekends.", []string{"deploy", "billing"}, 8},
	{"Invoice numbering", "Invoice numbers are allocated by the billing database sequence invoice_seq, never in application code. Gaps are allowed (a rolled-back transaction burns a number); duplicates are not. Finance was told and accepted the gaps in March.", nil, 0},
	{"Billing tests need Postgres 16", "The billing integration tests run against a real Postgres 16 started by docker compose (compose.test.yml). SQLite was tried and dropped: it accepts the JSONB queries silently wrong. Run `make test-billing`, which waits for the database health check.", []string{"testing"}, 0},
	{"Currency rounding rule", "All money in billing is integer minor units (cents). Convert to decimal only at the edge, for display. Rounding is half-even, applied once per invoice line, not per tax component.", nil, 0},
	{"Stripe webhook secret rotation", "The Stripe webhook signing secret for billing rotates every 90 days. The new secret goes into the vault path billing/stripe/webhook first; the service reads both old and new for 24 hours, then drop the old one.", []string{"security", "billing"}, 8},
	{"Billing owner and reviewers", "Billing code is owned by the payments team. Every pull request that touches billing/ needs a review from Dana or Kofi; schema migrations need both.", nil, 0},
	{"Retry policy for billing jobs", "Billing background jobs retry with exponential backoff starting at 30 seconds, at most 6 attempts, then land in the dead-letter queue billing-dlq. An alert fires when that queue holds more than 10 messages for 15 minutes.", []string{"ops"}, 0},
	{"Tax rates source", "Tax rates for billing come from the tax_rates table, loaded nightly from the accounting export. Do not hard-code a rate, even in tests: use the fixture loader in billing/testdata/rates.go.", nil, 0},
	{"Billing API versioning", "The public billing API is versioned in the URL (/v2/invoices). A breaking change needs a new version; v1 stays until its traffic is below one percent for a month. Additive fields are fine in place.", []string{"api"}, 0},
	{"Billing logs must not hold card data", "Never log card numbers, CVCs or full customer addresses in billing. The logger's redaction filter covers the known field names; a new field holding personal data must be added to billing/log/redact.go in the same pull request.", []string{"security"}, 0},
}

// Goal and limit of a default answer's cost: its cl100k tokens over those
// of the titles and contents it carries (issue 24).
const (
	answerCostGoal  = 1.15
	answerCostLimit = 1.3
)

// TestDefaultAnswerCost: every core and meta tool that answers with
// memories costs, in its default format, close to their titles and
// contents in cl100k tokens. The store answer and the answers that carry
// no memory text are bounded in tokens outright.
func TestDefaultAnswerCost(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "core,meta"})
	payload := map[string]int{} // title → tokens of title and content
	var ids, storeAnswers []string
	for _, m := range tokenCostMemories {
		args := map[string]any{"title": m.title, "content": m.content, "namespace": "billing"}
		if m.tags != nil {
			args["tags"] = m.tags
		}
		if m.priority != 0 {
			args["priority"] = m.priority
		}
		text, isErr := h.call("memory_store", args)
		if isErr {
			t.Fatalf("store: %s", text)
		}
		storeAnswers = append(storeAnswers, text)
		payload[m.title] = tokencost.Count(m.title) + tokencost.Count(m.content)
	}
	for _, m := range rows(h.ok("memory_list", map[string]any{"namespace": "billing", "format": "json"})["memories"]) {
		ids = append(ids, m["id"].(string))
	}
	all := 0
	for _, n := range payload {
		all += n
	}

	// ratio is an answer's cost over the memories it must carry.
	ratio := func(name, text string, carries int) float64 {
		t.Helper()
		n := tokencost.Count(text)
		r := float64(n) / float64(carries)
		t.Logf("%-22s %5d tokens for %5d of titles and contents: %.3fx", name, n, carries, r)
		if r > answerCostLimit {
			t.Errorf("%s costs %.3fx its titles and contents (goal %.2f, limit %.2f):\n%s", name, r, answerCostGoal, answerCostLimit, text)
		}
		return r
	}
	every := func(name, text string) {
		t.Helper()
		for _, m := range tokenCostMemories {
			if !strings.Contains(text, m.title) || !strings.Contains(text, m.content[:60]) {
				t.Fatalf("%s lacks %q:\n%s", name, m.title, text)
			}
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"memory_recall", map[string]any{"context": "billing", "namespace": "billing"}},
		{"memory_list", map[string]any{"namespace": "billing"}},
		{"memory_search", map[string]any{"query": "billing"}},
		{"memory_session_start", map[string]any{"namespace": "billing"}},
	} {
		text, isErr := h.call(c.tool, c.args)
		if isErr {
			t.Fatalf("%s: %s", c.tool, text)
		}
		every(c.tool, text)
		ratio(c.tool, text, all)
	}
	var gets strings.Builder
	for _, id := range ids {
		text, isErr := h.call("memory_get", map[string]any{"id": id})
		if isErr || !strings.Contains(text, "content") {
			t.Fatalf("get %s: %s", id, text)
		}
		gets.WriteString(text)
	}
	ratio("memory_get (each)", gets.String(), all)

	// Answers that carry no memory text: their whole cost, bounded.
	bounded := func(name, text string, limit int) {
		t.Helper()
		n := tokencost.Count(text)
		t.Logf("%-22s %5d tokens: %s", name, n, firstLine(text))
		if n > limit {
			t.Errorf("%s costs %d tokens, want at most %d:\n%s", name, n, limit, text)
		}
	}
	// The short id, and a short id for each memory the new one may
	// contradict: an 8-character hex id is at most 8 tokens (a full one
	// about 22), the object around the first 6 and the key of the list 6.
	for _, text := range storeAnswers {
		var answer struct {
			PotentialContradictions []string `json:"potential_contradictions"`
		}
		if err := json.Unmarshal([]byte(text), &answer); err != nil {
			t.Fatalf("store answer is not JSON: %v\n%s", err, text)
		}
		limit := 14
		if n := len(answer.PotentialContradictions); n > 0 {
			limit += 6 + 9*n
		}
		bounded("memory_store", text, limit)
	}
	reg, _ := h.call("memory_agent_register", map[string]any{"agent_type": "ai:claude-code", "capabilities": []string{"billing"}})
	bounded("memory_agent_register", reg, 40)
	agents, _ := h.call("memory_agent_list", nil)
	bounded("memory_agent_list", agents, 60)
	stats, _ := h.call("memory_stats", nil)
	bounded("memory_stats", stats, 140)
	caps, _ := h.call("memory_capabilities", nil)
	for _, tool := range []string{"memory_session_start", "memory_get"} {
		args := map[string]any{"namespace": "billing"}
		if tool == "memory_get" {
			args = map[string]any{"id": ids[0]}
		}
		text, _ := h.call(tool, args)
		t.Logf("%s answers:\n%s", tool, text)
	}
	t.Logf("%-22s %5d tokens (the host's answer, not bounded here)", "memory_capabilities", tokencost.Count(caps))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return fmt.Sprintf("%s … (%d lines)", s[:i], strings.Count(s, "\n")+1)
	}
	return s
}
