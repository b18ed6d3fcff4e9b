package e2e

import (
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

// TestRecallTokenCost: a 10-memory recall in the default format costs
// close to its memories' titles and contents in cl100k tokens.
func TestRecallTokenCost(t *testing.T) {
	s := newEnv(t).startRaw()
	payload := 0
	for _, m := range tokenCostMemories {
		args := map[string]any{"title": m.title, "content": m.content, "namespace": "billing"}
		if m.tags != nil {
			args["tags"] = m.tags
		}
		if m.priority != 0 {
			args["priority"] = m.priority
		}
		var stored struct{ ID string }
		callJSON(t, s, "memory_store", args, &stored)
		payload += tokencost.Count(m.title) + tokencost.Count(m.content)
	}
	resp := s.request("tools/call", map[string]any{"name": "memory_recall", "arguments": map[string]any{"context": "billing", "namespace": "billing"}})
	text, isErr := toolResult(resp)
	if isErr {
		t.Fatalf("recall: %s", text)
	}
	for _, m := range tokenCostMemories {
		if !contains(text, m.title) {
			t.Fatalf("recall lacks %q:\n%s", m.title, text)
		}
	}
	ratio := float64(tokencost.Count(text)) / float64(payload)
	t.Logf("result %d tokens for %d of titles and contents: %.3fx\n%s", tokencost.Count(text), payload, ratio, text)
	if ratio > 1.25 {
		t.Errorf("recall of 10 memories costs %.3fx their titles and contents, want at most 1.25x", ratio)
	}
}
