package e2e

import (
	"fmt"
	"slices"
	"testing"
)

// recallIDs runs memory_recall and returns the ids it ranked, best first.
func recallIDs(t testing.TB, s *rawSession, args map[string]any) []string {
	t.Helper()
	args["format"] = "json"
	var res struct {
		Memories []struct {
			ID string `json:"id"`
		} `json:"memories"`
	}
	callJSON(t, s, "memory_recall", args, &res)
	var ids []string
	for _, m := range res.Memories {
		ids = append(ids, m.ID)
	}
	return ids
}

func storeID(t testing.TB, s *rawSession, args map[string]any) string {
	t.Helper()
	var stored struct {
		ID string `json:"id"`
	}
	args["format"] = "json" // the full id, as json results show it
	callJSON(t, s, "memory_store", args, &stored)
	return stored.ID
}

// TestRecallOrderIndependent: recall's side effects (access counts, expiry,
// promotion) must not change what later recalls rank. The same 100
// questions asked twice in a row over 400 notes give the same top 5.
func TestRecallOrderIndependent(t *testing.T) {
	c := loadCollection(t, "notes")
	s := newEnv(t).startRaw()
	for _, d := range c.Docs[:400] {
		args := map[string]any{"title": d.Title, "content": d.Content, "namespace": d.Namespace, "priority": d.Priority, "tier": d.Tier}
		if len(d.Tags) > 0 {
			args["tags"] = d.Tags
		}
		storeID(t, s, args)
	}
	queries := c.Queries[:100]
	first := make([][]string, len(queries))
	for i, q := range queries {
		first[i] = recallIDs(t, s, map[string]any{"context": q.Text, "namespace": q.Namespace, "limit": 5})
	}
	changed := 0
	for i, q := range queries {
		again := recallIDs(t, s, map[string]any{"context": q.Text, "namespace": q.Namespace, "limit": 5})
		if !slices.Equal(first[i], again) {
			changed++
			t.Errorf("%s %q: top 5 was %v, asked again %v", q.ID, q.Text, first[i], again)
		}
	}
	t.Logf("%d of %d queries changed their top 5 when asked again", changed, len(queries))
}

// TestRecallPopularityDoesNotLeak: a memory that many earlier recalls
// returned stays out of the top 5 of a question sharing no content word
// with it, however many function words they share.
func TestRecallPopularityDoesNotLeak(t *testing.T) {
	s := newEnv(t).startRaw()
	popular := storeID(t, s, map[string]any{"title": "Weekly sync notes",
		"content": "What the team discussed about the roadmap and the release plan, and who is on call for the release."})
	topics := []string{"the database backup schedule is nightly at two", "the staging cluster is rebuilt on every merge",
		"the database backup is restored to staging each monday", "what the on-boarding checklist is for a new hire",
		"the coffee machine on the third floor is broken", "the office is closed on public holidays",
		"what the expense policy is for travel", "the VPN certificate expires in the spring",
		"the linter config lives in the repository root", "the design review is on thursdays"}
	for i, text := range topics {
		storeID(t, s, map[string]any{"title": fmt.Sprintf("Note %d", i+1), "content": text})
	}
	for i := range 60 {
		q := []string{"roadmap", "release plan", "team sync", "weekly notes", "who is on call"}[i%5]
		if got := recallIDs(t, s, map[string]any{"context": q}); len(got) == 0 || got[0] != popular {
			t.Fatalf("recall %q = %v, want the sync notes first", q, got)
		}
	}
	got := recallIDs(t, s, map[string]any{"context": "what is the schedule of the database backup?", "limit": 5})
	if slices.Contains(got, popular) {
		t.Errorf("a question sharing only function words with the popular memory has it in its top 5: %v", got)
	}
	if len(got) == 0 {
		t.Errorf("the database backup notes were not found")
	}
}

// TestRecallRelevanceBeatsPopularity: a memory touched 1,000 times, at
// priority 10 and tier long, matching one common word of the question,
// ranks below an untouched priority-1 memory matching its rare words.
func TestRecallRelevanceBeatsPopularity(t *testing.T) {
	s := newEnv(t).startRaw()
	popular := storeID(t, s, map[string]any{"title": "Project handbook", "tier": "long", "priority": 10,
		"content": "How the project is run: weekly planning, code review before merge, and a demo every second friday."})
	for i := range 20 {
		storeID(t, s, map[string]any{"title": fmt.Sprintf("Project note %d", i+1),
			"content": fmt.Sprintf("Status of project task %d: on track.", i+1)})
	}
	rare := storeID(t, s, map[string]any{"title": "Flamingo migration", "priority": 1, "tier": "short",
		"content": "The flamingo service migrates to the zanzibar cluster in May."})
	for range 1000 {
		if got := recallIDs(t, s, map[string]any{"context": "handbook", "limit": 1}); len(got) != 1 || got[0] != popular {
			t.Fatalf("recall handbook = %v", got)
		}
	}
	got := recallIDs(t, s, map[string]any{"context": "project flamingo zanzibar"})
	at := func(id string) int { return slices.Index(got, id) }
	if at(rare) < 0 || (at(popular) >= 0 && at(popular) < at(rare)) {
		t.Errorf("popular memory at %d, rare-term memory at %d: %v", at(popular), at(rare), got)
	}
}
