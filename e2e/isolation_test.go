package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The isolation matrix (issue 23): one `ai-memory serve`, two keys made by
// `ai-memory token create <team> --namespace <team>`. Tenant A (team-a)
// fills its namespace with every kind of record; tenant B (team-b) then
// tries A's namespace, ids, prefixes, titles, filters, inbox, pending
// actions, standards and subscriptions through every argument of every
// tool of every family, directly and through the bridge
// (memory_capabilities {tool, arguments}), and through a webhook and the
// event stream. Each try passes when:
//   - its answer shows nothing of A's (no marker word of A's texts, no id
//     or short id of A's, not A's principal) beyond what B itself sent;
//   - it answers exactly as the same call would with A's references
//     replaced by ones that do not exist (its twin): no existence leaks
//     through an error, a count or an absence;
//   - and, for the reads that name nothing of A's, B's view is the same
//     before A wrote anything and after.
// A's data (as an operator sees it) is the same after every try.

// isoPath is one try: a tool and arguments naming something of A's, as a
// template: {a1} … are A's references, which the twin replaces.
type isoPath struct {
	tool, path string
	args       map[string]any
	view       bool // names nothing of A's: B's answer is the same before A's data exists
}

// bridged reports whether the path is tried through the bridge too (the
// bridge does not run itself).
func (p isoPath) bridged() bool { return p.tool != "memory_capabilities" }

// isoMatrix is every tool of every family with the arguments of each that
// name a namespace, id, filter or prefix, pointed at A's.
func isoMatrix() []isoPath {
	ids := func(xs ...string) []any {
		out := make([]any, len(xs))
		for i, x := range xs {
			out[i] = x
		}
		return out
	}
	m := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	return []isoPath{
		// core
		{"memory_store", "namespace", m("title", "bee probe", "content", "x", "namespace", "{nsA}"), false},
		{"memory_store", "sub-namespace", m("title", "bee probe", "content", "x", "namespace", "{nsA}/sub"), false},
		{"memory_store", "title in A's namespace, on_conflict error", m("title", "{titleA}", "content", "x", "namespace", "{nsA}", "on_conflict", "error"), false},
		{"memory_store", "A's inbox", m("title", "bee probe", "content", "x", "namespace", "_messages/{principalA}"), false},
		{"memory_store", "a family keyspace", m("title", "{keepTitle}", "content", "x", "namespace", "_family/keep", "on_conflict", "error"), false},
		{"memory_recall", "context", m("context", "{wordA} bee"), true},
		{"memory_recall", "namespace", m("context", "{wordA}", "namespace", "{nsA}/sub"), false},
		{"memory_recall", "as_agent and tags", m("context", "{wordA}", "as_agent", "{nsA}", "tags", "{tagA}"), false},
		{"memory_list", "all", m("format", "json", "limit", 100), true},
		{"memory_list", "namespace", m("namespace", "{nsA}", "format", "json"), false},
		{"memory_list", "inbox", m("namespace", "_messages/{principalA}", "format", "json"), false},
		{"memory_list", "keyspace", m("namespace", "_family/keep", "format", "json"), true},
		{"memory_list", "agent_id", m("agent_id", "{principalA}", "format", "json"), false},
		{"memory_get", "id", m("id", "{a1}"), false},
		{"memory_get", "short id", m("id", "{a1short}"), false},
		{"memory_get", "inbox message", m("id", "{inboxA}"), false},
		{"memory_get", "keyspace memory", m("id", "{keepID}"), false},
		{"memory_search", "query", m("query", "{wordA}", "format", "json"), true},
		{"memory_search", "namespace and author", m("query", "{wordA}", "namespace", "{nsA}", "agent_id", "{principalA}", "format", "json"), false},
		{"memory_search", "as_agent", m("query", "{wordA}", "as_agent", "{nsA}/sub", "format", "json"), false},
		// lifecycle
		{"memory_update", "id", m("id", "{a1}", "content", "overwritten by bee"), false},
		{"memory_update", "short id", m("id", "{a1short}", "content", "overwritten by bee"), false},
		{"memory_update", "move into A's namespace onto its title", m("id", "{b1}", "namespace", "{nsA}", "title", "{titleA}"), false},
		{"memory_delete", "id", m("id", "{a1}"), false},
		{"memory_delete", "short id", m("id", "{a2short}", "archive", true), false},
		{"memory_forget", "namespace", m("namespace", "{nsA}", "dry_run", true), false},
		{"memory_forget", "pattern", m("pattern", "{wordA}", "dry_run", true), true},
		{"memory_forget", "pattern, for real", m("pattern", "{wordA}"), false},
		{"memory_forget", "inbox", m("namespace", "_messages/{principalA}", "dry_run", true), false},
		{"memory_forget", "tier A's memories have", m("tier", "mid", "dry_run", true), true},
		{"memory_forget", "tier, for real", m("tier", "mid"), false},
		{"memory_gc", "dry run", m("dry_run", true), true},
		{"memory_gc", "for real", m(), false},
		{"memory_promote", "id", m("id", "{a1}"), false},
		{"memory_promote", "to A's namespace", m("id", "{a2}", "to_namespace", "{nsA}"), false},
		// graph
		{"memory_kg_query", "source", m("source_id", "{a1}", "direction", "both", "max_depth", 3), false},
		{"memory_kg_query", "from B's memory", m("source_id", "{b1}", "direction", "both", "max_depth", 3), true},
		{"memory_kg_timeline", "source", m("source_id", "{a1}"), false},
		{"memory_kg_timeline", "from B's memory", m("source_id", "{b1}"), true},
		{"memory_kg_invalidate", "A's link", m("source_id", "{a1}", "target_id", "{a2}", "relation", "related_to"), false},
		{"memory_kg_invalidate", "to A's memory", m("source_id", "{b1}", "target_id", "{a1}", "relation", "related_to"), false},
		{"memory_link", "to A's memory", m("source_id", "{b1}", "target_id", "{a1}"), false},
		{"memory_link", "between A's memories", m("source_id", "{a2}", "target_id", "{a1}"), false},
		{"memory_get_links", "id", m("id", "{a1}"), false},
		{"memory_get_links", "B's memory", m("id", "{b1}"), true},
		{"memory_entity_register", "A's namespace", m("canonical_name", "{entityA}", "aliases", ids("{aliasA}"), "namespace", "{nsA}"), false},
		{"memory_entity_get_by_alias", "alias", m("alias", "{aliasA}"), false},
		{"memory_entity_get_by_alias", "alias in A's namespace", m("alias", "{aliasA}", "namespace", "{nsA}"), false},
		{"memory_get_taxonomy", "all", m(), true},
		{"memory_get_taxonomy", "prefix", m("namespace_prefix", "{nsA}"), false},
		// governance
		{"memory_pending_list", "all", m("status", "all"), true},
		{"memory_pending_approve", "id", m("id", "{pendingA}"), false},
		{"memory_pending_reject", "id", m("id", "{pendingA}"), false},
		{"memory_namespace_set_standard", "A's namespace", m("namespace", "{nsA}", "id", "{b1}", "governance", map[string]any{"write": "owner"}), false},
		{"memory_namespace_set_standard", "A's as parent", m("namespace", "team-b/child", "id", "{b1}", "parent", "{nsA}"), false},
		{"memory_namespace_set_standard", "A's memory as standard", m("namespace", "team-b", "id", "{a1}"), false},
		{"memory_namespace_set_standard", "the global one", m("namespace", "*", "id", "{b1}"), true},
		{"memory_namespace_get_standard", "A's namespace", m("namespace", "{nsA}", "inherit", true), false},
		{"memory_namespace_get_standard", "global", m("namespace", "*", "inherit", true), true},
		{"memory_namespace_clear_standard", "A's namespace", m("namespace", "{nsA}"), false},
		{"memory_subscribe", "namespace filter", m("url", "{hookB}", "namespace_filter", "{nsA}", "include_content", true), false},
		{"memory_subscribe", "inbox filter", m("url", "{hookB}", "namespace_filter", "_messages/{principalA}", "include_content", true), false},
		{"memory_subscribe", "keyspace filter", m("url", "{hookB}", "namespace_filter", "_family/keep", "include_content", true), true},
		{"memory_unsubscribe", "A's subscription", m("id", "{subA}"), false},
		// power
		{"memory_consolidate", "A's memories", m("ids", ids("{a1}", "{a2}"), "title", "bee merged", "namespace", "team-b"), false},
		{"memory_consolidate", "B's and A's", m("ids", ids("{b1}", "{a1}"), "title", "bee merged", "namespace", "team-b"), false},
		{"memory_consolidate", "into A's namespace", m("ids", ids("{b1}", "{b2}"), "title", "{titleA}", "namespace", "{nsA}"), false},
		{"memory_detect_contradiction", "A's memory", m("id_a", "{b1}", "id_b", "{a1}"), false},
		{"memory_check_duplicate", "A's text", m("title", "{titleA}", "content", "{contentA}"), true},
		{"memory_check_duplicate", "A's namespace", m("title", "{titleA}", "content", "{contentA}", "namespace", "{nsA}"), false},
		{"memory_auto_tag", "A's memory", m("id", "{a1}"), false},
		{"memory_expand_query", "A's words", m("query", "{wordA} bee"), true},
		{"memory_expand_query", "A's namespace", m("query", "{wordA}", "namespace", "{nsA}"), false},
		{"memory_inbox", "own", m("limit", 50), true},
		// meta
		{"memory_capabilities", "families", m(), true},
		{"memory_agent_register", "as A", m("agent_id", "{principalA}", "agent_type", "bee"), false},
		{"memory_agent_list", "all", m(), true},
		{"memory_session_start", "A's namespace", m("namespace", "{nsA}"), false},
		{"memory_stats", "all", m(), true},
		// archive
		{"memory_archive_list", "all", m(), true},
		{"memory_archive_list", "id", m("id", "{archivedA}"), false},
		{"memory_archive_list", "namespace", m("namespace", "{nsA}"), false},
		{"memory_archive_purge", "ids", m("ids", ids("{archivedA}"), "dry_run", true), false},
		{"memory_archive_purge", "ids, for real", m("ids", ids("{archivedA}")), false},
		{"memory_archive_purge", "everything old", m("older_than_days", 0, "dry_run", true), true},
		{"memory_archive_restore", "id", m("id", "{archivedA}"), false},
		{"memory_archive_restore", "version", m("id", "{a1}", "version", "{versionA}"), false},
		{"memory_archive_stats", "all", m(), true},
		// other
		{"memory_list_subscriptions", "all", m(), true},
		{"memory_notify", "A's inbox", m("target_agent_id", "{principalA}", "title", "bee note {route}", "payload", "from bee"), false},
		{"memory_notify", "a title A's inbox holds", m("target_agent_id", "{principalA}", "title", "{inboxTitle}", "payload", "from bee"), false},
		// a third-party family's keyspace, and the event stream (test plugin keeper)
		{"keep_list", "keyspace", m(), true},
		{"keep_put", "keyspace", m("title", "{keepTitle}", "content", "x"), false},
		{"keep_watch", "replayed events", m("until", "bee two"), true},
		{"stash_list", "another keyspace", m(), true},
		{"stash_put", "another keyspace", m("title", "{keepTitle}", "content", "x"), false},
		{"stash_watch", "replayed events", m("until", "bee two"), true},
		{"test_echo", "a third-party tool", m("say", "{nsA}"), false},
	}
}

// isoRefusals are the tries that must be refused outright, by what their
// answer says (a refusal by B's own grant, which tells nothing of A's).
var isoRefusals = map[string]string{
	"memory_store namespace":                                 "outside the namespaces team-b may use",
	"memory_store sub-namespace":                             "outside the namespaces team-b may use",
	"memory_store title in A's namespace, on_conflict error": "outside the namespaces team-b may use",
	"memory_store A's inbox":                                 "is guarded",
	"memory_store a family keyspace":                         "is guarded",
	"memory_update move into A's namespace onto its title":   "outside the namespaces team-b may use",
	"memory_forget namespace":                                "outside the namespaces team-b may use",
	"memory_forget inbox":                                    "is guarded",
	"memory_entity_register A's namespace":                   "outside the namespaces team-b may use",
	"memory_namespace_set_standard A's namespace":            "outside the namespaces team-b may use",
	"memory_namespace_set_standard A's as parent":            "outside the namespaces team-b may use",
	"memory_namespace_set_standard the global one":           "outside the namespaces team-b may use",
	"memory_namespace_clear_standard A's namespace":          "outside the namespaces team-b may use",
	"memory_namespace_get_standard A's namespace":            "not a namespace team-b may read",
	"memory_subscribe namespace filter":                      "not a namespace team-b may read",
	"memory_subscribe inbox filter":                          "not a namespace team-b may read",
	"memory_subscribe keyspace filter":                       "not a namespace team-b may read",
	"memory_consolidate into A's namespace":                  "outside the namespaces team-b may use",
	"keep_put keyspace":                                      "PermissionDenied",
	"stash_put another keyspace":                             "PermissionDenied",
}

// isoRefs are A's references and the twins that replace them: names and
// ids of the same shape that name nothing.
type isoRefs struct{ real, twin map[string]string }

func (r isoRefs) fill(v any, twin bool, route string) any {
	refs := r.real
	if twin {
		refs = r.twin
	}
	switch x := v.(type) {
	case string:
		for k, val := range refs {
			x = strings.ReplaceAll(x, "{"+k+"}", val)
		}
		return strings.ReplaceAll(x, "{route}", route)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.fill(e, twin, route)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = r.fill(e, twin, route)
		}
		return out
	}
	return v
}

// sent is every string value of args: what an answer may echo.
func sent(v any) []string {
	switch x := v.(type) {
	case string:
		return append(strings.Fields(x), x)
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, sent(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range x {
			out = append(out, sent(e)...)
		}
		return out
	}
	return nil
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	fracPattern = regexp.MustCompile(`\d+\.\d+`)
	nanoPattern = regexp.MustCompile(`\b1\d{18}\b`) // unix nanoseconds
	hexID       = regexp.MustCompile(`\b[0-9a-f]{8,36}\b`)
	// A read's own bookkeeping on B's memories (recall touches them).
	accessPattern = regexp.MustCompile(`"access_count":\d+`)
)

// normal is an answer with what varies between two identical calls made
// at different moments (ids minted, times, scores), and the values the
// call sent, replaced by placeholders.
func normal(answer string, args map[string]any) string {
	for _, s := range sortedByLength(sent(args)) {
		if len(s) >= 3 {
			answer = strings.ReplaceAll(answer, s, "<sent>")
		}
	}
	answer = uuidPattern.ReplaceAllString(answer, "<uuid>")
	answer = timePattern.ReplaceAllString(answer, "<time>")
	answer = nanoPattern.ReplaceAllString(answer, "<ns>")
	answer = fracPattern.ReplaceAllString(answer, "<num>")
	answer = accessPattern.ReplaceAllString(answer, `"access_count":<n>`)
	return hexID.ReplaceAllString(answer, "<hex>")
}

func sortedByLength(ss []string) []string {
	out := slices.Clone(ss)
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// TestIsolationMatrix: see the comment at the top of the file.
func TestIsolationMatrix(t *testing.T) {
	e := newEnv(t)
	e.pin("keeper")
	e.writeConfig(hookConfig + "[mcp]\nexpansion_interval = \"0\"\n[ttl]\nshort_ttl_secs = 1\n")
	keyA := e.token("team-a", "--namespace", "team-a")
	keyB := e.token("team-b", "--namespace", "team-b")
	s := e.serve("--profile", "full")
	a, b := s.connect(keyA, nil), s.connect(keyB, nil)
	ops := e.startHost([]string{"--profile", "full"}, "AI_MEMORY_AGENT_ID=ops")

	// Every tool of every family the server offers has a row.
	matrix := isoMatrix()
	covered := map[string]bool{}
	for _, p := range matrix {
		covered[p.tool] = true
	}
	for _, name := range b.toolNames() {
		if !covered[name] {
			t.Errorf("tool %s has no row in the isolation matrix", name)
		}
	}

	hookA, hookB := newReceiver(t, ""), newReceiver(t, "")
	// Long, so that recall's touches change no tier or expiry of B's.
	b1 := b.ok("memory_store", map[string]any{"title": "bee one", "content": "bee words", "namespace": "team-b", "tier": "long", "format": "json"})["id"].(string)
	b2 := b.ok("memory_store", map[string]any{"title": "bee two", "content": "bee other words", "namespace": "team-b", "tier": "long", "format": "json"})["id"].(string)
	b.ok("memory_subscribe", map[string]any{"url": hookB.srv.URL + "/b", "include_content": true})

	refs := isoRefs{
		real: map[string]string{"nsA": "team-a", "principalA": "team-a", "b1": b1, "b2": b2, "hookB": hookB.srv.URL + "/b",
			"wordA": "zqaxylo", "tagA": "zqatag", "titleA": "zqatitle one", "contentA": "zqaxylo zqahunter secret",
			"entityA": "Zqavault", "aliasA": "zqavlt", "keepTitle": "zqakeep title", "inboxTitle": "zqainbox title"},
		twin: map[string]string{"nsA": "team-q", "principalA": "team-q", "b1": b1, "b2": b2, "hookB": hookB.srv.URL + "/b",
			"wordA": "zqbxylo", "tagA": "zqbtag", "titleA": "zqbtitle one", "contentA": "zqbxylo zqbhunter secret",
			"entityA": "Zqbvault", "aliasA": "zqbvlt", "keepTitle": "zqbkeep title", "inboxTitle": "zqbinbox title"},
	}
	// B's view before A wrote anything.
	run := func(route string, p isoPath, twin bool) (string, map[string]any) {
		t.Helper()
		args := refs.fill(p.args, twin, route).(map[string]any)
		if route == "bridge" {
			text, _ := b.call("memory_capabilities", map[string]any{"tool": p.tool, "arguments": args})
			return text, args
		}
		text, _ := b.call(p.tool, args)
		return text, args
	}
	before := map[string]string{}
	for _, p := range matrix {
		if p.view {
			text, args := run("direct", p, false)
			before[p.tool+" "+p.path] = normal(text, args)
		}
	}

	// A's records: memories (one linked, one in a sub-namespace), an
	// entity, an archived memory and a superseded version, an expired one,
	// a message in its inbox, its webhook, a standard and a queued write;
	// and an operator's memory in a family keyspace.
	store := func(args map[string]any) string {
		t.Helper()
		args["format"] = "json" // whole ids
		return a.ok("memory_store", args)["id"].(string)
	}
	subA := a.ok("memory_subscribe", map[string]any{"url": hookA.srv.URL + "/a", "namespace_filter": "team-a", "include_content": true})["id"].(string)
	a1 := store(map[string]any{"title": "zqatitle one", "content": "zqaxylo zqahunter secret", "namespace": "team-a", "tags": []string{"zqatag"}})
	a2 := store(map[string]any{"title": "zqatitle two", "content": "zqaxylo zqaother words", "namespace": "team-a/sub"})
	a.ok("memory_link", map[string]any{"source_id": a1, "target_id": a2})
	a.ok("memory_entity_register", map[string]any{"canonical_name": "Zqavault", "aliases": []string{"zqavlt"}, "namespace": "team-a"})
	gone := store(map[string]any{"title": "zqatitle gone", "content": "zqaxylo zqagone", "namespace": "team-a"})
	a.ok("memory_delete", map[string]any{"id": gone, "archive": true})
	a.ok("memory_update", map[string]any{"id": a1, "content": "zqaxylo zqahunter secret zqaversion"})
	fading := store(map[string]any{"title": "zqatitle fading", "content": "zqaxylo zqafading", "namespace": "team-a", "tier": "short"})
	a.ok("memory_notify", map[string]any{"target_agent_id": "team-a", "title": "zqainbox title", "payload": "zqainbox payload"})
	rules := store(map[string]any{"title": "zqarules", "content": "zqaxylo rules", "namespace": "team-a"})
	a.ok("memory_namespace_set_standard", map[string]any{"namespace": "team-a", "id": rules, "governance": map[string]any{"write": "approve"}})
	queued := a.ok("memory_store", map[string]any{"title": "zqatitle queued", "content": "zqaxylo zqapayload", "namespace": "team-a", "format": "json"})
	pendingA, _ := queued["pending_id"].(string)
	if pendingA == "" {
		t.Fatalf("A's queued store: %v", queued)
	}
	keepID, _ := ops.ok("keep_put", map[string]any{"title": "zqakeep title", "content": "zqaxylo zqakept"})["id"].(string)
	if keepID == "" {
		t.Fatal("the operator's keyspace memory was not stored")
	}
	inbox := a.ok("memory_inbox", map[string]any{})
	inboxA := firstID(t, inbox)
	archived := ops.ok("memory_archive_list", map[string]any{"id": a1})
	versionA := firstField(t, archived, "archived_at")
	eventually(t, 10*time.Second, "A's short memory to expire", func() bool {
		text, _ := ops.call("memory_list", map[string]any{"namespace": "team-a", "format": "json", "limit": 100})
		return !strings.Contains(text, fading)
	})
	// A scoped key cannot use a family keyspace: the family's state is
	// shared by every principal it serves.
	if out := a.ok("keep_put", map[string]any{"title": "zqa try", "content": "x"}); out["code"] != "PermissionDenied" {
		t.Errorf("team-a's keep_put: %v", out)
	}

	for i, k := range []string{"a1", "a2", "a1short", "a2short", "inboxA", "keepID", "pendingA", "subA", "archivedA", "versionA"} {
		v := map[string]string{"a1": a1, "a2": a2, "a1short": a1[:8], "a2short": a2[:8], "inboxA": inboxA, "keepID": keepID,
			"pendingA": pendingA, "subA": subA, "archivedA": gone, "versionA": versionA}[k]
		refs.real[k] = v
		refs.twin[k] = twinOf(v, i)
	}
	markers := []string{"zqa", "team-a", a1[:8], a2[:8], gone[:8], fading[:8], rules[:8], inboxA[:8], keepID[:8], pendingA[:8], subA[:8]}
	leaked := func(what, answer string, args map[string]any) {
		t.Helper()
		for _, s := range sortedByLength(sent(args)) {
			answer = strings.ReplaceAll(answer, s, "")
		}
		for _, m := range markers {
			if strings.Contains(answer, m) {
				t.Errorf("%s: the answer shows A's %q: %.400s", what, m, answer)
			}
		}
	}

	dumpA := func() string {
		t.Helper()
		var out []string
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"memory_list", map[string]any{"namespace": "team-a", "format": "json", "limit": 100}},
			{"memory_list", map[string]any{"namespace": "team-a/sub", "format": "json", "limit": 100}},
			{"memory_archive_list", map[string]any{"namespace": "team-a", "limit": 100}},
			{"memory_pending_list", map[string]any{"status": "all"}},
			{"memory_get_links", map[string]any{"id": a1}},
			{"memory_entity_get_by_alias", map[string]any{"alias": "zqavlt"}},
			{"memory_namespace_get_standard", map[string]any{"namespace": "team-a"}},
			{"keep_list", map[string]any{}},
		} {
			text, _ := ops.call(c.tool, c.args)
			out = append(out, c.tool+" "+text)
		}
		text, _ := a.call("memory_list_subscriptions", map[string]any{})
		return strings.Join(append(out, "subscriptions "+text), "\n")
	}
	aBefore := dumpA()

	tries := 0
	for _, p := range matrix {
		name := p.tool + " " + p.path
		var answers [2]string
		for i, route := range []string{"direct", "bridge"} {
			if route == "bridge" && !p.bridged() {
				answers[1] = answers[0]
				continue
			}
			real, args := run(route, p, false)
			tries++
			leaked(route+" "+name, real, args)
			if want := isoRefusals[name]; want != "" && !strings.Contains(real, want) {
				t.Errorf("%s %s: %.300s, want a refusal saying %q", route, name, real, want)
			}
			twin, targs := run(route, p, true)
			if nr, nt := normal(real, args), normal(twin, targs); nr != nt {
				t.Errorf("%s %s answers otherwise than for names of nothing:\n  %.400s\n  %.400s", route, name, nr, nt)
			}
			answers[i] = normal(real, args)
			if p.view && route == "direct" && answers[i] != before[name] {
				t.Errorf("B's view %s changed with A's data:\n  before %.400s\n  after  %.400s", name, before[name], answers[i])
			}
		}
		if answers[0] != answers[1] {
			t.Errorf("%s: the bridge answers otherwise than the tool:\n  %.400s\n  %.400s", name, answers[0], answers[1])
		}
	}
	if after := dumpA(); after != aBefore {
		t.Errorf("B's tries changed A's data:\n%s\n→\n%s", aBefore, after)
	}

	// Webhooks: B's subscription (no filter, with content) receives B's
	// writes and nothing of A's; A's receives A's.
	b.ok("memory_store", map[string]any{"title": "bee sentinel", "content": "bee last", "namespace": "team-b"})
	a.ok("memory_notify", map[string]any{"target_agent_id": "team-a", "title": "zqainbox last", "payload": "zqainbox payload"})
	eventually(t, 30*time.Second, "B's webhook to receive its sentinel", func() bool { return delivered(hookB, "bee sentinel") })
	eventually(t, 30*time.Second, "A's webhook to receive A's memory", func() bool { return delivered(hookA, "zqatitle one") })
	hookB.mu.Lock()
	bodies, _ := json.Marshal(hookB.accepted)
	hookB.mu.Unlock()
	leaked("B's webhook deliveries", string(bodies), nil)

	// The event stream, replayed from the start as each caller sees it:
	// B's plugin call sees B's events only; the operator's, a family's
	// (keep) call, sees neither another family's keyspace nor another's
	// inbox, but its own keyspace.
	ops.ok("stash_put", map[string]any{"title": "zqastash title", "content": "zqaxylo stash"})
	ops.ok("keep_put", map[string]any{"title": "ops sentinel", "content": "x"})
	watched := b.ok("keep_watch", map[string]any{"until": "bee sentinel"})
	seen, _ := json.Marshal(watched["events"])
	leaked("B's event stream", string(seen), nil)
	if watched["code"] != "OK" {
		t.Errorf("B's event stream: %v", watched)
	}
	watched = ops.ok("keep_watch", map[string]any{"until": "ops sentinel"})
	seen, _ = json.Marshal(watched["events"])
	if s := string(seen); watched["code"] != "OK" || strings.Contains(s, "zqastash") || strings.Contains(s, "zqainbox") || !strings.Contains(s, "zqakeep title") {
		t.Errorf("the keep family's event stream: %s", s)
	}
	t.Logf("isolation matrix: %d tools × %d paths, %d tries (direct and bridge), each with its twin", len(covered), len(matrix), tries)
}

// delivered reports whether r received a payload titled title.
func delivered(r *hookReceiver, title string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.accepted {
		if p["title"] == title {
			return true
		}
	}
	return false
}

// twinOf is the i-th reference of the same shape as v that names nothing:
// a UUID for a UUID, hex for a short id, another instant for a time.
func twinOf(v string, i int) string {
	switch {
	case uuidPattern.MatchString(v):
		return fmt.Sprintf("0badc0de-0000-4000-8000-%012d", i)
	case len(v) == 8:
		return fmt.Sprintf("0bad%04d", i)
	}
	if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return at.Add(-time.Hour).Format(time.RFC3339Nano)
	}
	return v + "0"
}

// firstID is the id of the first item of a tool's JSON list answer.
func firstID(t *testing.T, out map[string]any) string {
	t.Helper()
	return firstField(t, out, "id")
}

// firstField is a field of the first object of the first list in out.
func firstField(t *testing.T, out map[string]any, field string) string {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(out)) {
		if l, ok := out[k].([]any); ok && len(l) > 0 {
			if o, ok := l[0].(map[string]any); ok {
				if v, ok := o[field]; ok {
					return fmt.Sprint(v)
				}
			}
		}
	}
	t.Fatalf("no %s in %v", field, out)
	return ""
}

// A key narrowed or revoked narrows or ends its webhooks: the operator
// gives team-b a narrower key and revokes the wide one; team-b's next
// call narrows its subscription, which then matches nothing outside the
// new grant; revoking its last key removes the subscription.
func TestNarrowedAndRevokedKeysWebhooks(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(hookConfig)
	wide := e.token("team-b", "--namespace", "team-b")
	s := e.serve("--profile", "core,governance,other")
	hook := newReceiver(t, "")
	s.connect(wide, nil).ok("memory_subscribe", map[string]any{"url": hook.srv.URL + "/b", "include_content": true})
	keyID := func(key string) string { return strings.Split(key, "_")[1] }

	narrow := e.token("team-b", "--namespace", "team-b/x")
	if out, code := e.cli("token", "revoke", keyID(wide)); code != 0 || strings.Contains(out, "removed") {
		t.Fatalf("revoking one of two keys: %d %s", code, out)
	}
	b := s.connect(narrow, nil)
	b.ok("memory_store", map[string]any{"title": "bee x", "content": "in x", "namespace": "team-b/x"}) // its call narrows the grant
	ops := e.startHost([]string{"--profile", "core,governance,other"}, "AI_MEMORY_AGENT_ID=team-b")    // the operator's session of the same name widens nothing
	ops.ok("memory_store", map[string]any{"title": "bee top", "content": "outside the narrowed grant", "namespace": "team-b"})
	ops.ok("memory_store", map[string]any{"title": "bee x2", "content": "inside it", "namespace": "team-b/x"})
	// Both deliveries settled, and nothing else was ever queued.
	eventually(t, 30*time.Second, "both deliveries to settle", func() bool {
		sub := subscriptions(b)[0]
		return sub["dispatch_count"] == float64(2) && sub["pending"] == nil
	})
	if !delivered(hook, "bee x2") || delivered(hook, "bee top") {
		t.Errorf("after narrowing, delivered: %v", hook.accepted)
	}

	if out, code := e.cli("token", "revoke", keyID(narrow)); code != 0 {
		t.Fatalf("revoking the last key: %d %s", code, out)
	}
	if subs := subscriptions(ops); len(subs) != 0 {
		t.Errorf("team-b's subscriptions after its last key was revoked: %v", subs)
	}
}
