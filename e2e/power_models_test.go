package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// modelHost starts a host under --profile power with the embedding
// endpoint o configured.
func modelHost(t *testing.T, o *openAI, timeout string) (*env, *host) {
	t.Helper()
	e := newEnv(t)
	e.writeConfig(embeddingsConfig(o, timeout))
	return e, e.startHost([]string{"--profile", "power"})
}

// coverage is doctor's embedder line.
func (e *env) coverage() string {
	out, _ := e.doctor()
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "embedder") {
			return line
		}
	}
	return ""
}

func (e *env) engineLog() string {
	b, _ := os.ReadFile(filepath.Join(e.dataDir, "engine.log"))
	return string(b)
}

func TestEmbeddingsUsedWhenConfigured(t *testing.T) {
	o := newOpenAI(t, 32)
	e, h := modelHost(t, o, "5s")
	id := h.store("Deploy freeze", "Never deploy the billing service on a Friday afternoon.")
	h.store("Lunch", "Team lunch is on Thursdays at noon.")
	h.store("Cloud key", "aws key AKIAIOSFODNN7EXAMPLE for the deploy bucket")
	eventually(t, 10*time.Second, "two memories embedded on write", func() bool {
		return strings.Contains(e.coverage(), "test-embed: 2 of 3 memories have vectors")
	})
	if o.saw("AKIAIOSFODNN7EXAMPLE") {
		t.Fatal("a memory holding an AWS key was sent to the endpoint")
	}
	if line := e.coverage(); !strings.Contains(line, "1 withheld (secrets)") {
		t.Errorf("doctor: %s", line)
	}

	caps := h.ok("memory_capabilities", map[string]any{})
	emb, _ := caps["embedder"].(map[string]any)
	feat, _ := caps["features"].(map[string]any)
	if emb["model"] != "test-embed" || emb["reachable"] != true || emb["vectors"] != float64(2) || feat["hybrid_recall"] != true || feat["recall_mode_active"] != "hybrid" {
		t.Fatalf("capabilities: %v", caps)
	}
	text, isErr := h.call("memory_recall", map[string]any{"context": "billing deploys on fridays"})
	if isErr || !strings.Contains(text, "mode:hybrid") || !strings.Contains(text, "Deploy freeze") {
		t.Fatalf("recall with vectors: %s", text)
	}
	got := h.ok("memory_check_duplicate", map[string]any{"title": "Deploy freeze", "content": "Never deploy the billing service on a Friday afternoon!"})
	if got["method"] != "embedding_cosine" || got["is_duplicate"] != true || got["suggested_merge"] != id || got["threshold"] != 0.9 {
		t.Fatalf("check_duplicate with vectors: %v", got)
	}

	// reindex has nothing to do but the withheld memory, which it reports.
	out, code := e.cli("reindex", "--quiet")
	if code != 0 || !strings.Contains(out, "reindexed 0 memories with test-embed") || !strings.Contains(out, "1 withheld") {
		t.Fatalf("reindex: %d %s", code, out)
	}
}

// A store never waits for the embedding endpoint: with the endpoint
// holding every request (and the engine willing to wait 30s for it), the
// store is acknowledged while its embedding request is still held.
func TestStoreDoesNotWaitForTheEmbedder(t *testing.T) {
	o := newOpenAI(t, 16)
	_, h := modelHost(t, o, "30s")
	o.set("hang")
	h.store("Deploy freeze", "Never deploy the billing service on a Friday afternoon.")
	eventually(t, 10*time.Second, "the store's embedding request", func() bool { return o.hung.Load() > 0 })
	if n := o.gaveUp.Load(); n != 0 {
		t.Errorf("the engine gave up on %d held embedding requests before the store was acknowledged", n)
	}
}

// Every way an endpoint fails leaves stores working, recall on keyword
// with the reason said, duplicate checks on shingles with the reason, and
// a line in the engine's log.
func TestEmbeddingEndpointFailuresDegrade(t *testing.T) {
	for _, c := range []struct{ mode, reason string }{
		{"500", "HTTP 500"},
		{"hang", "no answer within 300ms"},
		{"baddims", "3 dimensions, want 16"},
		{"cut", "/v1/embeddings"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			o := newOpenAI(t, 16)
			e, h := modelHost(t, o, "300ms")
			h.store("Seed", "The first memory, embedded while the endpoint works.")
			eventually(t, 10*time.Second, "the seed embedded", func() bool {
				return strings.Contains(e.coverage(), "1 of 1 memories have vectors")
			})
			o.set(c.mode)
			h.store("Deploy freeze", "Never deploy the billing service on a Friday afternoon.")
			text, isErr := h.call("memory_recall", map[string]any{"context": "billing deploys"})
			if isErr || strings.Contains(text, "mode:hybrid") || !strings.Contains(text, "semantic_reason") || !strings.Contains(text, c.reason) || !strings.Contains(text, "Deploy freeze") {
				t.Fatalf("recall with a failing endpoint: %s", text)
			}
			got := h.ok("memory_check_duplicate", map[string]any{"title": "Deploy freeze", "content": "Never deploy the billing service on a Friday afternoon."})
			if got["method"] != "shingle_jaccard" || got["is_duplicate"] != true || !strings.Contains(got["reason"].(string), "embedding endpoint failed") {
				t.Fatalf("check_duplicate with a failing endpoint: %v", got)
			}
			if n := len(rows(h.ok("memory_list", map[string]any{"format": "json"})["memories"])); n != 2 {
				t.Fatalf("%d memories stored, want 2", n)
			}
			if log := e.engineLog(); !strings.Contains(log, "embedding endpoint failed") {
				t.Errorf("no log line:\n%s", log)
			}
			if line := e.coverage(); !strings.Contains(line, "last request failed") {
				t.Errorf("doctor: %s", line)
			}
			caps := h.ok("memory_capabilities", map[string]any{})
			if emb, _ := caps["embedder"].(map[string]any); emb["reachable"] != false || caps["features"].(map[string]any)["hybrid_recall"] != false {
				t.Errorf("capabilities with a failing endpoint: %v", caps)
			}
		})
	}
}

func TestChatUsedWhenConfiguredAndDegrades(t *testing.T) {
	o := newOpenAI(t, 16)
	e := newEnv(t)
	e.writeConfig(chatConfig(o, "300ms"))
	h := e.startHost([]string{"--profile", "power"})
	a := h.store("Billing deploys", "Never deploy billing on a Friday.")
	b := h.store("Billing deploys 2", "Billing deploys are fine on Fridays.")
	secret := h.store("Deploy token", "the deploy token is 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")

	got := h.ok("memory_auto_tag", map[string]any{"id": a})
	if got["method"] != "llm" || strings.Join(anyStrings(got["new_tags"]), ",") != "billing,deploys,fridays" {
		t.Fatalf("auto_tag with a model: %v", got)
	}
	got = h.ok("memory_expand_query", map[string]any{"query": "billing"})
	if got["method"] != "llm" || strings.Join(anyStrings(got["expanded_terms"]), ",") != "invoices,payments" {
		t.Fatalf("expand_query with a model: %v", got)
	}
	got = h.ok("memory_detect_contradiction", map[string]any{"id_a": a, "id_b": b})
	if got["method"] != "llm" || got["verdict"] != "contradicts" {
		t.Fatalf("detect_contradiction with a model: %v", got)
	}
	// A memory that looks like it holds a token is never sent.
	got = h.ok("memory_auto_tag", map[string]any{"id": secret})
	if got["method"] != "tfidf" || !strings.Contains(got["reason"].(string), "looks like it holds a secret") || o.saw("ghp_") {
		t.Fatalf("auto_tag of a secret: %v", got)
	}
	c1, c2 := h.store("Release day", "Releases go out on Tuesdays."), h.store("Release owner", "The release captain rotates weekly.")
	got = h.ok("memory_consolidate", map[string]any{"ids": []string{c1, c2}, "title": "Releases"})
	if got["method"] != "llm" || got["summary_preview"] != "Billing deploys: frozen on Fridays, according to one note." {
		t.Fatalf("consolidate with a model: %v", got)
	}
	c3 := h.store("Release token", "Publish with 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 on release day.")
	c4 := h.store("Release notes", "Release notes are written by the captain.")
	got = h.ok("memory_consolidate", map[string]any{"ids": []string{c3, c4}, "title": "Release secrets"})
	if got["method"] != "extractive" || !strings.Contains(got["reason"].(string), "looks like it holds a secret") || o.saw("ghp_") {
		t.Fatalf("consolidate of a secret: %v", got)
	}
	// Down: the classical method, the reason, a log line; writes still work.
	o.set("500")
	got = h.ok("memory_detect_contradiction", map[string]any{"id_a": a, "id_b": b})
	if got["method"] != "heuristic" || !strings.Contains(got["reason"].(string), "HTTP 500") {
		t.Fatalf("contradiction with the endpoint down: %v", got)
	}
	got = h.ok("memory_expand_query", map[string]any{"query": "billing"})
	if got["method"] != "pmi" || !strings.Contains(got["reason"].(string), "chat endpoint failed") {
		t.Fatalf("expand_query with the endpoint cooling down: %v", got)
	}
	c5, c6 := h.store("Oncall A", "Alice is on call in week one."), h.store("Oncall B", "Bob is on call in week two.")
	got = h.ok("memory_consolidate", map[string]any{"ids": []string{c5, c6}, "title": "Oncall"})
	if got["method"] != "extractive" || !strings.Contains(got["reason"].(string), "chat endpoint failed") || got["id"] == nil {
		t.Fatalf("consolidate with the endpoint down: %v", got)
	}
	h.store("After", "stores never depend on the chat endpoint")
	if !strings.Contains(e.engineLog(), "chat endpoint failed") {
		t.Error("no log line for the failed chat endpoint")
	}
}
