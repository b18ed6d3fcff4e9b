package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/tokencost"
)

func metaHost(t *testing.T) *host {
	t.Helper()
	return newEnv(t).startHost([]string{"--profile", "meta,lifecycle"})
}

func TestMetaProfileServesSessionStartAndStats(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "meta"})
	for _, n := range []string{"memory_session_start", "memory_stats", "memory_capabilities", "memory_store"} {
		if !slices.Contains(h.toolNames(), n) {
			t.Errorf("--profile meta lacks %s (has %v)", n, h.toolNames())
		}
	}
	if core := newEnv(t).startHost(nil); slices.Contains(core.toolNames(), "memory_stats") {
		t.Errorf("the core profile shows meta tools: %v", core.toolNames())
	}
}

func TestMetaStats(t *testing.T) {
	h := metaHost(t)
	a := h.ok("memory_store", map[string]any{"format": "json", "title": "A", "content": "alpha", "namespace": "s1", "tier": "long"})["id"].(string)
	h.ok("memory_store", map[string]any{"format": "json", "title": "B", "content": "beta", "namespace": "s1", "tier": "mid"})
	h.ok("memory_store", map[string]any{"format": "json", "title": "C", "content": "gamma", "namespace": "s2", "tier": "mid"})
	d := h.ok("memory_store", map[string]any{"format": "json", "title": "D", "content": "delta", "namespace": "s2", "tier": "short"})["id"].(string)
	h.ok("memory_delete", map[string]any{"id": d, "archive": true})
	h.ok("memory_update", map[string]any{"id": a, "content": "alpha two"})

	st := h.ok("memory_stats", nil)
	if st["total"] != 3.0 || st["db_size_bytes"].(float64) <= 0 {
		t.Errorf("stats = %v", st)
	}
	if got := fmt.Sprint(st["by_tier"]); got != "[map[count:2 tier:mid] map[count:1 tier:long]]" {
		t.Errorf("by_tier = %s", got)
	}
	if got := fmt.Sprint(st["by_namespace"]); got != "[map[count:2 namespace:s1] map[count:1 namespace:s2]]" {
		t.Errorf("by_namespace = %s", got)
	}
	idx, _ := st["index"].(map[string]any)
	if idx["healthy"] != true || idx["indexed"] != 3.0 || idx["stored"] != 3.0 || idx["terms"].(float64) < 3 {
		t.Errorf("index health = %v", idx)
	}
	arch, _ := st["archive"].(map[string]any)
	if arch["archived"] != 1.0 || arch["versions"] != 1.0 || arch["size_bytes"].(float64) <= 0 {
		t.Errorf("archive = %v", arch)
	}
	h.refused("memory_stats", map[string]any{"namespace": "s1"}, "namespace", "s1", "s2")
}

// session_start's whole result stays within budget_tokens, counted by the
// counter doctor --tokens uses, and fills it.
func TestMetaSessionStartBudget(t *testing.T) {
	h := metaHost(t)
	for i := range 30 {
		h.ok("memory_store", map[string]any{"format": "json", "title": fmt.Sprintf("Fact %02d", i), "namespace": "proj",
			"content": strings.Repeat(fmt.Sprintf("word%d detail about the project ", i), 12), "priority": 1 + i%10})
	}
	for _, budget := range []int{60, 150, 400, 1000, 2000} {
		text, isErr := h.call("memory_session_start", map[string]any{"namespace": "proj", "limit": 50, "budget_tokens": budget})
		if isErr {
			t.Fatalf("budget %d: %s", budget, text)
		}
		n := tokencost.Count(text)
		if n > budget {
			t.Errorf("budget %d: result is %d tokens", budget, n)
		}
		// Each memory costs about 100 tokens: a budget that can hold one
		// more leaves less room than that unused.
		if budget >= 400 && budget-n > 150 {
			t.Errorf("budget %d: only %d tokens used", budget, n)
		}
	}
	// The default budget is 2000.
	text, _ := h.call("memory_session_start", map[string]any{"namespace": "proj", "limit": 50})
	if n := tokencost.Count(text); n > 2000 || n < 1800 {
		t.Errorf("default budget: %d tokens", n)
	}
}

func TestMetaSessionStartSelection(t *testing.T) {
	h := metaHost(t)
	imp := h.ok("memory_store", map[string]any{"format": "json", "title": "Important", "content": "x", "namespace": "org/app", "priority": 10})["id"].(string)
	for i := range 5 {
		h.ok("memory_store", map[string]any{"format": "json", "title": fmt.Sprintf("Mid %d", i), "content": "x", "namespace": "org/app", "priority": 5})
	}
	parent := h.ok("memory_store", map[string]any{"format": "json", "title": "Org rule", "content": "x", "namespace": "org", "priority": 9})["id"].(string)
	h.ok("memory_store", map[string]any{"format": "json", "title": "Elsewhere", "content": "x", "namespace": "other", "priority": 10})
	old := h.ok("memory_store", map[string]any{"format": "json", "title": "Old low", "content": "x", "namespace": "org/app", "priority": 1})["id"].(string)
	h.ok("memory_update", map[string]any{"id": old, "content": "just edited"}) // most recent now

	out := h.ok("memory_session_start", map[string]any{"namespace": "org/app", "limit": 3, "format": "json"})
	ms := rows(out["memories"])
	if out["mode"] != "session_start" || out["count"] != 3.0 || len(ms) != 3 {
		t.Fatalf("session_start = %v", out)
	}
	// Alternating: most important, most recent, next most important.
	if ms[0]["id"] != imp || ms[0]["why"] != "priority" || ms[1]["id"] != old || ms[1]["why"] != "recent" || ms[2]["id"] != parent {
		t.Errorf("selection = %v", ms)
	}
	for _, m := range ms {
		if m["namespace"] == "other" {
			t.Errorf("a memory of another project: %v", m)
		}
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"limit": 0}, "limit: must be an integer from 1 to 50"},
		{map[string]any{"limit": 51}, "limit: must be an integer from 1 to 50"},
		{map[string]any{"budget_tokens": 5}, "budget_tokens: must be an integer from 20"},
		{map[string]any{"budget_tokens": "2000"}, "budget_tokens: must be"},
		{map[string]any{"namespace": "a//b"}, "namespace"},
		{map[string]any{"format": "yaml"}, "format: must be one of toon_compact, toon, json"},
	} {
		h.refused("memory_session_start", tc.args, tc.want, "org/app", "org")
	}
}

// An agent registers only its own session identity; an operator may
// register another. Last-seen follows the calls the engine sees.
func TestMetaAgentRegistry(t *testing.T) {
	e := newEnv(t)
	e.writeConfig("[governance]\noperators = [\"ai:op\"]\n")
	alice := e.startHost([]string{"--profile", "meta", "--agent-id", "ai:alice"})
	lastSeen := regexp.MustCompile(`,"last_seen_at":"[^"]*"`)
	registry := func() string { // without last-seen: every call moves it
		text, isErr := alice.call("memory_agent_list", map[string]any{"format": "json"})
		if isErr {
			t.Fatalf("memory_agent_list: %s", text)
		}
		return lastSeen.ReplaceAllString(text, "")
	}
	listed := func() []map[string]any {
		text, _ := alice.call("memory_agent_list", map[string]any{"format": "json"})
		return rows(jsonOf(t, text)["agents"])
	}
	out := alice.ok("memory_agent_register", map[string]any{"agent_type": "ai:claude-code", "capabilities": []string{"code"}, "format": "json"})
	if out["registered"] != true || out["agent_id"] != "ai:alice" || out["id"] == nil {
		t.Fatalf("register self = %v", out)
	}
	again := alice.ok("memory_agent_register", map[string]any{"agent_id": "ai:alice", "agent_type": "ai:claude-code", "capabilities": []string{"code"}, "format": "json"})
	if again["id"] != out["id"] {
		t.Errorf("re-registration changed the registry id: %v then %v", out, again)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"agent_id": "ai:bob", "agent_type": "human"}, "registers only its own session identity"},
		{map[string]any{}, "agent_type is required"},
		{map[string]any{"agent_type": ""}, "agent_type: must not be empty"},
		{map[string]any{"agent_type": strings.Repeat("x", 65)}, "agent_type: must be 1 to 64 bytes"},
		{map[string]any{"agent_type": "human", "capabilities": "all"}, "capabilities: must be an array of strings"},
		{map[string]any{"agent_type": "human", "agent_id": ""}, "agent_id"},
		{map[string]any{"agent_type": "human", "agent_id": 7}, "agent_id: must be a string"},
		{map[string]any{"agent_type": "human", "role": "admin"}, "role"},
	} {
		before := registry()
		alice.fails("memory_agent_register", tc.args, tc.want)
		if after := registry(); after != before {
			t.Errorf("refused register %v changed the registry:\n%s\n%s", tc.args, before, after)
		}
	}
	alice.fails("memory_agent_list", map[string]any{"all": true}, "all")

	op := e.startHost([]string{"--profile", "meta", "--agent-id", "ai:op"})
	// The default answer says only what the caller did not send.
	if out := op.ok("memory_agent_register", map[string]any{"agent_id": "ai:bob", "agent_type": "human"}); out["agent_id"] != "ai:bob" ||
		out["created"] != true || len(out) != 3 {
		t.Errorf("operator registering bob = %v", out)
	}
	// The default list is one TOON row an agent, without timestamps.
	if text, _ := alice.call("memory_agent_list", nil); text != "count:2\nagents[agent_id|agent_type|capabilities|registered_by]:\nai:alice|ai:claude-code|code|\nai:bob|human||ai:op" {
		t.Errorf("agent list =\n%s", text)
	}
	list := jsonOf(t, registry())
	agents := rows(list["agents"])
	if list["count"] != 2.0 || len(agents) != 2 || agents[0]["agent_id"] != "ai:alice" || agents[1]["agent_id"] != "ai:bob" ||
		agents[1]["registered_by"] != "ai:op" || agents[0]["registered_by"] != nil ||
		!slices.Equal(strs(agents[0]["capabilities"]), []string{"code"}) {
		t.Fatalf("registry = %v", list)
	}
	// The engine keeps alice's last-seen current from her calls.
	seen := listed()[0]["last_seen_at"].(string)
	alice.ok("memory_stats", nil)
	if now := listed()[0]["last_seen_at"].(string); now <= seen {
		t.Errorf("last_seen_at did not move on a call: %s then %s", seen, now)
	}
}

func TestMetaSessionStartStandards(t *testing.T) {
	h := newEnv(t).startHost([]string{"--profile", "meta,governance", "--agent-id", "ai:alice"})
	std := h.ok("memory_store", map[string]any{"format": "json", "title": "House rules", "content": "Use tabs.", "namespace": "proj", "priority": 10})["id"].(string)
	h.ok("memory_store", map[string]any{"format": "json", "title": "Fact", "content": "x", "namespace": "proj"})
	h.ok("memory_namespace_set_standard", map[string]any{"namespace": "proj", "id": std})
	out := h.ok("memory_session_start", map[string]any{"namespace": "proj", "format": "json"})
	st := rows(out["standards"])
	if len(st) != 1 || st[0]["id"] != std || st[0]["content"] != "Use tabs." {
		t.Fatalf("standards = %v", out)
	}
	for _, m := range rows(out["memories"]) {
		if m["id"] == std {
			t.Errorf("the standard is also among the memories: %v", out)
		}
	}
	if out["count"] != 1.0 {
		t.Errorf("session_start = %v", out)
	}
}

// `ai-memory stats` prints the health view; doctor adds it while the
// engine runs.
func TestStatsCommandAndDoctorHealth(t *testing.T) {
	e := newEnv(t)
	h := e.startHost([]string{"--profile", "meta,lifecycle"})
	id := h.ok("memory_store", map[string]any{"format": "json", "title": "A", "content": "alpha", "namespace": "cli"})["id"].(string)
	h.ok("memory_delete", map[string]any{"id": id, "archive": true})
	h.ok("memory_store", map[string]any{"format": "json", "title": "B", "content": "beta", "namespace": "cli"})

	cmd := command(t, filepath.Join(e.binDir, "ai-memory"), "stats")
	cmd.Env = e.environ()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ai-memory stats: %v\n%s", err, out)
	}
	for _, want := range []string{"memories   1 (mid 1)", "namespaces 1: cli 1", "index      healthy: 1 memories indexed of 1 stored", "archive    1 removed memories"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	health, code := e.doctor()
	if code != 0 || !strings.Contains(health, "healthy: 1 memories indexed of 1 stored") || !strings.Contains(health, "1 removed memories") {
		t.Errorf("doctor health view (exit %d):\n%s", code, health)
	}
}
