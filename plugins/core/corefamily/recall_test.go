package corefamily

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer/codec"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/sdk/sdktest"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type recallJSON struct {
	Count           int      `json:"count"`
	Mode            string   `json:"mode"`
	TokensUsed      int      `json:"tokens_used"`
	BudgetTokens    *int     `json:"budget_tokens"`
	BudgetOverflow  bool     `json:"budget_overflow"`
	MemoriesDropped int      `json:"memories_dropped"`
	Memories        []memory `json:"memories"`
}

func (h *harness) recall(args string) recallJSON {
	h.t.Helper()
	var res recallJSON
	h.OK("memory_recall", args, &res)
	return res
}

func TestRecall(t *testing.T) {
	h := newHarness(t)
	pg := h.store("Postgres replication", "streaming replicas", `{"tags":["db"]}`)
	redis := h.store("Redis cache", "eviction policy allkeys-lru", `{"tags":["cache"]}`)
	h.store("Unrelated", "nothing here", "")

	// Any word matches; every memory carries a score; tokens_used without a
	// budget is the bytes/4 estimate.
	res := h.recall(`{"context":"postgres redis","format":"json"}`)
	got := ids(res.Memories)
	slices.Sort(got)
	want := []string{pg, redis}
	slices.Sort(want)
	if res.Count != 2 || res.Mode != "keyword" || !slices.Equal(got, want) {
		t.Fatalf("recall = %+v", res)
	}
	if res.TokensUsed != (len("streaming replicas")+len("eviction policy allkeys-lru"))/4 {
		t.Errorf("tokens_used = %d", res.TokensUsed)
	}
	if res.BudgetTokens != nil || res.BudgetOverflow || res.MemoriesDropped != 0 {
		t.Errorf("budget fields without a budget: %+v", res)
	}
	for _, m := range res.Memories {
		if m.Score == nil || *m.Score != math.Round(*m.Score*1000)/1000 {
			t.Errorf("score of %s = %v, want 3 dp", m.ID, m.Score)
		}
		// The result shows the memory after its touch.
		if m.AccessCount != 1 || m.LastAccessedAt == "" {
			t.Errorf("recall result not touched: %+v", m)
		}
	}

	// The touch is visible to get.
	if m := h.get(pg); m.AccessCount != 1 || m.LastAccessedAt == "" {
		t.Errorf("after recall, get = %+v", m)
	}

	// One tag, exact.
	if res := h.recall(`{"context":"postgres redis","tags":"cache","format":"json"}`); res.Count != 1 || res.Memories[0].ID != redis {
		t.Errorf("tag filter: %+v", res)
	}
	// limit 0 and no match: empty, not an error.
	if res := h.recall(`{"context":"postgres","limit":0,"format":"json"}`); res.Count != 0 || len(res.Memories) != 0 {
		t.Errorf("limit 0: %+v", res)
	}
	if res := h.recall(`{"context":"kubernetes","format":"json"}`); res.Count != 0 {
		t.Errorf("no match: %+v", res)
	}
	h.Fails("memory_recall", `{"context":"x","limit":51}`, "limit: must be an integer from 0 to 50 (got 51)")
	h.Fails("memory_recall", `{"context":"x","limit":10.5}`, "limit: must be an integer (got 10.5)")
}

func TestRecallTOON(t *testing.T) {
	h := newHarness(t)
	body := "a|b:c\nd " + strings.Repeat("é", 1500) // 3000+ bytes, cut on a rune boundary
	id := h.store("Pipe | title", body, `{"tags":["t1","t2"],"tier":"long"}`)

	toon := h.OK("memory_recall", `{"context":"pipe"}`, nil)
	lines := strings.Split(toon, "\n")
	if len(lines) != 3 {
		t.Fatalf("toon_compact =\n%s", toon)
	}
	// Compact: no mode (always keyword), no tokens_used without a budget,
	// no score, nothing default (namespace global, priority 5), nor the
	// caller's own agent id.
	if lines[0] != "count:1" {
		t.Errorf("header = %q", lines[0])
	}
	if lines[1] != "memories[id|title|tier|tags|content]:" {
		t.Errorf("columns = %q", lines[1])
	}
	// The id is the shortest unique prefix (8 characters in a small store).
	if prefix := id[:8] + `|Pipe \| title|long|t1,t2|a\|b:c\nd éé`; !strings.HasPrefix(lines[2], prefix) {
		t.Errorf("row = %.120s", lines[2])
	}
	cut := 2000 - len("a|b:c\nd ")
	cut -= cut % 2 // whole 2-byte runes only
	if want := fmt.Sprintf("é…[%d more bytes; memory_get %s]", len(body)-len("a|b:c\nd ")-cut, id[:8]); !strings.HasSuffix(lines[2], want) {
		t.Errorf("row ends %q, want %q", lines[2][len(lines[2])-80:], want)
	}

	full := h.OK("memory_recall", `{"context":"pipe","format":"toon","budget_tokens":100000}`, nil)
	if !strings.HasPrefix(full, "count:1|mode:keyword|tokens_used:") || !strings.Contains(full, "|budget_tokens:100000\n") ||
		!strings.Contains(full, "memories[id|title|tier|namespace|priority|confidence|score|access_count|tags|source|created_at|updated_at|metadata|content]:") {
		t.Errorf("toon =\n%.400s", full)
	}
	h.Fails("memory_recall", `{"context":"pipe","format":"yaml"}`, `format: must be one of toon_compact, toon, json (got "yaml")`)
}

func TestRecallBudget(t *testing.T) {
	h := newHarness(t)
	cl := codec.NewCl100kBase()
	// Priorities fix the rank order: a, then b, then c.
	contents := []string{
		"alpha " + strings.Repeat("one two three ", 10),
		"alpha " + strings.Repeat("four five six ", 20),
		"alpha " + strings.Repeat("seven eight nine ", 30),
	}
	var idList []string
	var tokens []int
	for i, c := range contents {
		idList = append(idList, h.store(fmt.Sprintf("Memory %d", i), c, fmt.Sprintf(`{"priority":%d}`, 9-i)))
		n, _ := cl.Count(c)
		tokens = append(tokens, n)
	}

	tests := []struct {
		name        string
		budget      int
		want        []string
		used        int
		overflow    bool
		dropped     int
		wantTouched bool
	}{
		{"all fit", tokens[0] + tokens[1] + tokens[2], idList, tokens[0] + tokens[1] + tokens[2], false, 0, true},
		{"two fit", tokens[0] + tokens[1] + tokens[2] - 1, idList[:2], tokens[0] + tokens[1], false, 1, true},
		{"stop at first misfit", tokens[0] + 1, idList[:1], tokens[0], false, 2, true},
		{"top alone over budget", tokens[0] - 1, idList[:1], tokens[0], true, 2, true},
		{"zero", 0, nil, 0, false, 3, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := h.get(idList[2]).AccessCount
			res := h.recall(fmt.Sprintf(`{"context":"alpha","budget_tokens":%d,"format":"json"}`, tc.budget))
			if got := ids(res.Memories); !slices.Equal(got, tc.want) || res.Count != len(tc.want) {
				t.Errorf("memories = %v, want %v", got, tc.want)
			}
			if res.TokensUsed != tc.used || res.BudgetOverflow != tc.overflow || res.MemoriesDropped != tc.dropped ||
				res.BudgetTokens == nil || *res.BudgetTokens != tc.budget {
				t.Errorf("got used=%d overflow=%v dropped=%d budget=%v; want %d %v %d %d",
					res.TokensUsed, res.BudgetOverflow, res.MemoriesDropped, res.BudgetTokens, tc.used, tc.overflow, tc.dropped, tc.budget)
			}
			// Only survivors are touched.
			after := h.get(idList[2]).AccessCount
			if touched := after > before; touched != slices.Contains(tc.want, idList[2]) {
				t.Errorf("third memory touched=%v", touched)
			}
		})
	}

	raw := h.OK("memory_recall", `{"context":"alpha","budget_tokens":0,"format":"json"}`, nil)
	if raw != `{"count":0,"mode":"keyword","tokens_used":0,"budget_tokens":0,"memories_dropped":3}` {
		t.Errorf("budget 0 json = %s", raw)
	}
	h.Fails("memory_recall", `{"context":"alpha","budget_tokens":-5}`, "budget_tokens: must be an integer from 0 to")
}

// TestRecallProximity: a nested namespace reaches its ancestors, not its
// descendants or siblings, and nearer memories are boosted (data-model §9.4).
func TestRecallProximity(t *testing.T) {
	h := newHarness(t)
	// The same memory at three depths; the shallower ones have a higher
	// priority, so without proximity they would rank first.
	root := h.store("Deploy rule", "ship on fridays never", `{"namespace":"org","priority":7}`)
	mid := h.store("Deploy rule", "ship on fridays never", `{"namespace":"org/team","priority":6}`)
	leaf := h.store("Deploy rule", "ship on fridays never", `{"namespace":"org/team/app","priority":5}`)
	h.store("Deploy rule", "ship on fridays never", `{"namespace":"org/team/app/sub"}`) // descendant
	h.store("Deploy rule", "ship on fridays never", `{"namespace":"other"}`)

	flat := h.recall(`{"context":"deploy","format":"json"}`)
	if len(flat.Memories) != 5 || flat.Memories[0].ID != root {
		t.Fatalf("without a namespace, priority should rank org first: %v", ids(flat.Memories))
	}
	raw := map[string]float64{}
	for _, m := range flat.Memories {
		raw[m.ID] = *m.Score
	}

	res := h.recall(`{"context":"deploy","namespace":"org/team/app","format":"json"}`)
	if got := ids(res.Memories); !slices.Equal(got, []string{leaf, mid, root}) {
		t.Fatalf("proximity order = %v, want leaf, mid, root", got)
	}
	// Scores carry the boost: ×1/(1+0.3·d). Raw scores moved a little with
	// the first recall's touch, so compare with a tolerance.
	for _, m := range res.Memories {
		d := map[string]float64{leaf: 0, mid: 1, root: 2}[m.ID]
		want := raw[m.ID] / (1 + 0.3*d)
		if math.Abs(*m.Score-want) > 0.3 {
			t.Errorf("%s score %.3f, want about %.3f", m.Namespace, *m.Score, want)
		}
	}

	// A flat namespace stays exact.
	if res := h.recall(`{"context":"deploy","namespace":"org","format":"json"}`); len(res.Memories) != 1 || res.Memories[0].ID != root {
		t.Errorf("flat namespace: %v", ids(res.Memories))
	}
}

func TestRecallTimeWindow(t *testing.T) {
	h := newHarness(t)
	h.store("Event", "launch day", "")
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(time.Hour)
	// Offsets are compared as times, not as text.
	inZone := func(ts time.Time) string { return ts.In(time.FixedZone("x", 5*3600)).Format(time.RFC3339) }

	tests := []struct {
		args string
		want int
	}{
		{`"since":"` + inZone(past) + `"`, 1},
		{`"since":"` + inZone(future) + `"`, 0},
		{`"until":"` + inZone(future) + `"`, 1},
		{`"until":"` + inZone(past) + `"`, 0},
		{`"since":"` + past.UTC().Format(time.RFC3339Nano) + `","until":"` + inZone(future) + `"`, 1},
	}
	for _, tc := range tests {
		res := h.recall(`{"context":"launch","format":"json",` + tc.args + `}`)
		if res.Count != tc.want {
			t.Errorf("%s: count %d, want %d", tc.args, res.Count, tc.want)
		}
	}
	h.Fails("memory_recall", `{"context":"launch","since":"last week"}`, `since: must be an RFC 3339 timestamp`)
	h.Fails("memory_recall", `{"context":"launch","until":"2026-01-01"}`, `until: must be an RFC 3339 timestamp`)
	h.Fails("memory_recall", `{"context":"launch","since":"`+inZone(future)+`","until":"`+inZone(past)+`"}`, "since: must not be after until")
}

// TestRecallPromotes: recall is the access path, so five recalls promote a
// mid memory to long and clear its expiry (data-model §4.3).
func TestRecallPromotes(t *testing.T) {
	h := newHarness(t)
	id := h.store("Often used", "frequently recalled fact", "")
	if m := h.get(id); m.Tier != "mid" || m.ExpiresAt == "" {
		t.Fatalf("fresh memory = %+v", m)
	}
	var last recallJSON
	for range 5 {
		last = h.recall(`{"context":"frequently","format":"json"}`)
	}
	if len(last.Memories) != 1 || last.Memories[0].Tier != "long" || last.Memories[0].AccessCount != 5 {
		t.Errorf("fifth recall shows %+v", last.Memories)
	}
	if m := h.get(id); m.Tier != "long" || m.ExpiresAt != "" || m.AccessCount != 5 {
		t.Errorf("after 5 recalls, get = %+v", m)
	}
}

// fullDisk is an engine whose writes fail as they do when the disk is full.
type fullDisk struct{ wire.Engine }

var errNoSpace = status.Error(codes.Internal, "write memory.db: no space left on device")

func (fullDisk) TouchMemories(context.Context, *aimemoryv1.TouchMemoriesRequest, ...grpc.CallOption) (*aimemoryv1.TouchMemoriesResponse, error) {
	return nil, errNoSpace
}

func (fullDisk) CollectGarbage(context.Context, *aimemoryv1.CollectGarbageRequest, ...grpc.CallOption) (*aimemoryv1.CollectGarbageResponse, error) {
	return nil, errNoSpace
}

// TestRecallSurvivesFailedBookkeeping: collecting expired memories and
// counting accesses are writes; when they fail, recall still answers with
// what it read.
func TestRecallSurvivesFailedBookkeeping(t *testing.T) {
	eng := sdktest.StartEngine(t)
	h := &harness{Family: sdktest.NewFamily(t, "core", Families(eng)).WithEngine(eng), t: t}
	id := h.store("Postgres replication", "streaming replicas", "")

	full := &harness{Family: sdktest.NewFamily(t, "core", Families(fullDisk{eng})).WithEngine(eng), t: t}
	res := full.recall(`{"context":"postgres","format":"json"}`)
	if res.Count != 1 || res.Memories[0].ID != id || res.Memories[0].Content != "streaming replicas" {
		t.Fatalf("recall with failing bookkeeping = %+v", res)
	}
	if m := h.get(id); m.AccessCount != 0 {
		t.Errorf("access count %d after a failed touch", m.AccessCount)
	}
}
