package retrieval

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/keyword"
)

// TestAgentQuestionsParaphrase measures how many of the agent collection's
// questions share no content word (Snowball stem outside the stop list)
// with their answer's title, tags and content, and holds it to most.
func TestAgentQuestionsParaphrase(t *testing.T) {
	c := Agent()
	if len(c.Queries) < 150 {
		t.Fatalf("%d questions, want at least 150", len(c.Queries))
	}
	stops := stopSet()
	docs := map[string]Doc{}
	for _, d := range c.Docs {
		docs[d.ID] = d
	}
	disjoint := 0
	for _, q := range c.Queries {
		var answer Doc
		for id := range c.Qrels[q.ID] {
			answer = docs[id]
		}
		words := map[string]bool{}
		for _, w := range keyword.Terms(nil, answer.Title+" "+answer.Content+" "+answer.Tags[0]) {
			words[w] = true
		}
		shared := false
		for _, w := range keyword.Query(q.Text) {
			if !stops[w] && words[w] {
				shared = true
			}
		}
		if !shared {
			disjoint++
		}
	}
	share := float64(disjoint) / float64(len(c.Queries))
	t.Logf("%d of %d questions (%.0f%%) share no content word with their answer", disjoint, len(c.Queries), 100*share)
	if share <= 0.5 {
		t.Errorf("only %.0f%% of the questions share no content word with their answer, want most", 100*share)
	}
}
