package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Governance over stdio: the namespace policy binds every write path from
// a host of any profile (it lives in the engine), approvals mean
// something, and the six governance tools answer and refuse as specified.

// governanceSurface is the governance tools this branch's admin plugin serves.
var governanceSurface = []string{"memory_pending_list", "memory_pending_approve", "memory_pending_reject",
	"memory_namespace_set_standard", "memory_namespace_get_standard", "memory_namespace_clear_standard"}

// govEnv is a data dir with operator ai:op, namespace "owned" pinned to
// ai:carol by config, and the writer test family (writes through the
// engine API directly) pinned.
func govEnv(t *testing.T) *env {
	e := newEnv(t)
	e.pin("writer")
	e.writeConfig("[governance]\noperators = [\"ai:op\"]\n[governance.owners]\n\"owned\" = \"ai:carol\"\n")
	return e
}

func (e *env) as(agent, profile string) *host {
	return e.startHost([]string{"--profile", profile, "--agent-id", agent})
}

func jsonOf(t *testing.T, text string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	return out
}

// govWorld is alice's governed namespace "gov" (standard "gov rules",
// memory "target"), and "note" in the ungoverned namespace "open".
type govWorld struct {
	alice                     *host
	rulesID, targetID, noteID string
}

func newGovWorld(t *testing.T, e *env, policy string) *govWorld {
	w := &govWorld{alice: e.as("ai:alice", "full")}
	store := func(title, ns string) string {
		return w.alice.ok("memory_store", map[string]any{"format": "json", "title": title, "content": title + " text", "namespace": ns})["id"].(string)
	}
	w.rulesID, w.targetID, w.noteID = store("gov rules", "gov"), store("target", "gov"), store("note", "open")
	w.alice.ok("memory_namespace_set_standard", map[string]any{"namespace": "gov", "id": w.rulesID, "governance": json.RawMessage(policy)})
	return w
}

// snapshot is what a refused or queued write must leave unchanged, as alice sees it.
func (w *govWorld) snapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, ns := range []string{"gov", "open"} {
		text, _ := w.alice.call("memory_list", map[string]any{"namespace": ns, "format": "json"})
		b.WriteString(text)
	}
	for _, id := range []string{w.targetID, w.noteID} {
		text, _ := w.alice.call("memory_get", map[string]any{"id": id, "format": "json"})
		b.WriteString(text)
	}
	return b.String()
}

// callVia calls a tool from h: directly, or through the memory_capabilities
// bridge when h's profile does not load the tool's family.
func callVia(h *host, bridged bool, tool string, args map[string]any) (string, bool) {
	if bridged {
		return h.call("memory_capabilities", map[string]any{"tool": tool, "arguments": args})
	}
	return h.call(tool, args)
}

// outcome classifies a write's answer: denied, queued or done.
func outcome(text string, isErr bool) string {
	switch {
	case strings.Contains(text, "denied by governance") || strings.Contains(text, `"code":"PermissionDenied"`):
		return "denied"
	case strings.Contains(text, `"pending_id"`) || strings.Contains(text, "queued for approval"):
		return "queued"
	case isErr || strings.Contains(text, `"code":"`) && !strings.Contains(text, `"code":"OK"`):
		return "failed: " + text
	}
	return "done"
}

// The bypass matrix: under a deny policy and an approval policy, every
// write path (store, merge, update, a move into the namespace, delete,
// link, the lifecycle tools: update, delete, forget, promote, and
// consolidate into and out of the namespace), from a host with --profile core and one with --profile full, is
// refused or queued, never done, and changes nothing.
func TestGovernanceBypassMatrix(t *testing.T) {
	for _, pol := range []struct{ name, doc, want string }{
		{"deny", `{"write":"owner","delete":"owner","promote":"owner"}`, "denied"},
		{"approval", `{"write":"approve","delete":"approve","promote":"approve"}`, "queued"},
	} {
		t.Run(pol.name, func(t *testing.T) {
			e := govEnv(t)
			w := newGovWorld(t, e, pol.doc)
			note2 := w.alice.ok("memory_store", map[string]any{"format": "json", "title": "note two", "content": "note two text", "namespace": "open"})["id"].(string)
			for _, profile := range []string{"core", "full"} {
				bob := e.as("ai:bob", profile)
				bridged := profile == "core"
				paths := []struct {
					name, tool string
					args       map[string]any
				}{
					{"store", "memory_store", map[string]any{"title": "bob new", "content": "x", "namespace": "gov"}},
					{"merge", "memory_store", map[string]any{"title": "target", "content": "overwritten by bob", "namespace": "gov"}},
					{"update", "writer_call", map[string]any{"op": "update", "id": w.targetID, "content": "edited by bob"}},
					{"move into", "writer_call", map[string]any{"op": "update", "id": w.noteID, "namespace": "gov"}},
					{"delete", "writer_call", map[string]any{"op": "delete", "id": w.targetID}},
					{"link", "memory_link", map[string]any{"source_id": w.noteID, "target_id": w.targetID}},
					{"link (engine)", "writer_call", map[string]any{"op": "link", "id": w.noteID, "target": w.targetID}},
					// The lifecycle family's writes: bridged under core, direct under full.
					{"memory_update", "memory_update", map[string]any{"id": w.targetID, "content": "edited by bob"}},
					{"memory_update move", "memory_update", map[string]any{"id": w.noteID, "namespace": "gov"}},
					{"memory_delete", "memory_delete", map[string]any{"id": w.targetID}},
					{"memory_delete archive", "memory_delete", map[string]any{"id": w.targetID, "archive": true}},
					{"memory_forget", "memory_forget", map[string]any{"namespace": "gov", "pattern": "target text"}},
					{"memory_promote", "memory_promote", map[string]any{"id": w.targetID}},
					// The power family's consolidate: into gov (write) and out of it (delete).
					{"memory_consolidate into", "memory_consolidate", map[string]any{"ids": []string{w.noteID, note2}, "title": "bob merged", "summary": "merged", "namespace": "gov"}},
					{"memory_consolidate sources", "memory_consolidate", map[string]any{"ids": []string{w.targetID, note2}, "title": "bob merged", "summary": "merged", "namespace": "open"}},
				}
				for _, p := range paths {
					before := w.snapshot(t)
					text, isErr := callVia(bob, bridged && p.tool != "memory_store", p.tool, p.args)
					if got := outcome(text, isErr); got != pol.want {
						t.Errorf("%s policy, --profile %s, %s: %s, want %s (%s)", pol.name, profile, p.name, got, pol.want, text)
					}
					if after := w.snapshot(t); after != before {
						t.Errorf("%s policy, --profile %s, %s changed the data:\nbefore %s\nafter  %s", pol.name, profile, p.name, before, after)
					}
				}
			}
			if pol.want == "queued" {
				list := w.alice.ok("memory_pending_list", map[string]any{})
				if list["count"].(float64) != 30 {
					t.Errorf("pending actions after the matrix: %v, want 30 (15 paths, 2 hosts)", list["count"])
				}
			}
		})
	}
}

// A queued write: the requester cannot approve or reject it; someone else
// approves and it runs once, as the requester, even when two approvers race.
func TestGovernanceApprovals(t *testing.T) {
	e := govEnv(t)
	w := newGovWorld(t, e, `{"write":"approve"}`)
	bob := e.as("ai:bob", "full")
	carol, dave := e.as("ai:carol", "full"), e.as("ai:dave", "full")

	queued := bob.ok("memory_store", map[string]any{"format": "json", "title": "needs approval", "content": "queued content", "namespace": "gov"})
	id, _ := queued["pending_id"].(string)
	if queued["status"] != "pending" || id == "" || queued["approver"] != "human" {
		t.Fatalf("queued store answered %v", queued)
	}
	listed := bob.ok("memory_pending_list", map[string]any{})
	if listed["count"].(float64) != 1 || !strings.Contains(fmt.Sprint(listed["pending"]), "queued content") {
		t.Errorf("pending list: %v", listed)
	}

	// Refused decisions, each changing nothing.
	before := w.snapshot(t)
	bob.fails("memory_pending_approve", map[string]any{"id": id}, "nobody approves their own request")
	bob.fails("memory_pending_reject", map[string]any{"id": id}, "nobody rejects their own request")
	carol.fails("memory_pending_approve", map[string]any{"id": id, "agent_id": "ai:bob"}, "agent_id: decisions are made as the session identity")
	carol.fails("memory_pending_approve", map[string]any{}, "id is required")
	carol.fails("memory_pending_approve", map[string]any{"id": 7}, "id: must be a string")
	carol.fails("memory_pending_approve", map[string]any{"id": "no-such-action"}, "pending action not found")
	carol.fails("memory_pending_approve", map[string]any{"id": id, "remember": "forever"}, "remember")
	carol.fails("memory_pending_reject", map[string]any{}, "id is required")
	carol.fails("memory_pending_reject", map[string]any{"id": "no-such-action"}, "pending action not found")
	if after := w.snapshot(t); after != before {
		t.Errorf("a refused decision changed the data")
	}
	if l := carol.ok("memory_pending_list", map[string]any{}); l["count"].(float64) != 1 {
		t.Errorf("still pending after refused decisions: %v", l)
	}

	// Two approvers at once: exactly one executes.
	type answer struct {
		text  string
		isErr bool
		err   error // the transport's, checked on the test goroutine
	}
	answers := make([]answer, 2)
	var wg sync.WaitGroup
	for i, h := range []*host{carol, dave} {
		wg.Go(func() {
			answers[i].text, answers[i].isErr, answers[i].err = h.tryCall("memory_pending_approve", map[string]any{"id": id})
		})
	}
	wg.Wait()
	won := 0
	for _, a := range answers {
		switch {
		case a.err != nil:
			t.Errorf("racing approval: %v", a.err)
		case !a.isErr && strings.Contains(a.text, `"executed":true`):
			won++
		case !(a.isErr && strings.Contains(a.text, "is approved")):
			t.Errorf("racing approval answered %q", a.text)
		}
	}
	if won != 1 {
		t.Fatalf("%d approvals executed, want 1: %v", won, answers)
	}
	var memoryID string
	for _, a := range answers {
		if !a.isErr {
			memoryID, _ = jsonOf(t, a.text)["memory_id"].(string)
		}
	}
	got := w.alice.ok("memory_get", map[string]any{"id": memoryID, "format": "json"})
	if got["title"] != "needs approval" || got["created_by"] != "ai:bob" {
		t.Errorf("the approved memory should be bob's queued one: %v", got)
	}
	found := w.alice.ok("memory_list", map[string]any{"namespace": "gov", "format": "json"})
	if n := strings.Count(fmt.Sprint(found["memories"]), "needs approval"); n != 1 {
		t.Errorf("the approved memory is stored %d times, want once", n)
	}
	approved := carol.ok("memory_pending_list", map[string]any{"status": "approved"})
	if approved["count"].(float64) != 1 || carol.ok("memory_pending_list", map[string]any{})["count"].(float64) != 0 {
		t.Errorf("after approval: approved %v", approved)
	}
	carol.fails("memory_pending_reject", map[string]any{"id": id}, "is approved")

	// Reject: by someone else; the payload stays for the record.
	second := bob.ok("memory_store", map[string]any{"format": "json", "title": "to reject", "content": "no", "namespace": "gov"})["pending_id"].(string)
	rej := carol.ok("memory_pending_reject", map[string]any{"id": second})
	if rej["rejected"] != true || rej["decided_by"] != "ai:carol" {
		t.Errorf("reject answered %v", rej)
	}
	all := carol.ok("memory_pending_list", map[string]any{"status": "all", "limit": 10})
	if all["count"].(float64) != 2 || !strings.Contains(fmt.Sprint(all["pending"]), "to reject") {
		t.Errorf("all: %v", all)
	}
	// memory_pending_list validation.
	carol.fails("memory_pending_list", map[string]any{"status": "done"}, "status: must be one of pending, approved, rejected, expired, all")
	carol.fails("memory_pending_list", map[string]any{"limit": 0}, "limit")
	carol.fails("memory_pending_list", map[string]any{"limit": 1001}, "limit")
	carol.fails("memory_pending_list", map[string]any{"limit": "ten"}, "limit")
	carol.fails("memory_pending_list", map[string]any{"colour": "red"}, "colour")
}

// Standards: the first setter or the configured owner owns a namespace;
// operators may always set, clear and reassign; others are refused and
// change nothing; get reports the policy in force; recall injects the chain.
func TestGovernanceStandards(t *testing.T) {
	e := govEnv(t)
	alice, bob := e.as("ai:alice", "full"), e.as("ai:bob", "full")
	op, carol := e.as("ai:op", "full"), e.as("ai:carol", "full")
	store := func(h *host, title, ns, tier string) string {
		return h.ok("memory_store", map[string]any{"format": "json", "title": title, "content": title + " says: review before merging", "namespace": ns, "tier": tier})["id"].(string)
	}
	rules := store(alice, "team rules", "team", "short")
	global := store(alice, "house rules", "global", "mid")

	set := alice.ok("memory_namespace_set_standard", map[string]any{"namespace": "team", "id": rules, "governance": map[string]any{"write": "owner"}})
	if set["set"] != true || set["owner"] != "ai:alice" || !strings.Contains(fmt.Sprint(set["governance"]), "write:owner") {
		t.Errorf("set_standard answered %v", set)
	}
	if got := alice.ok("memory_get", map[string]any{"id": rules, "format": "json"}); got["tier"] != "long" || got["expires_at"] != nil {
		t.Errorf("a standard's memory must not expire by tier: %v", got)
	}

	// Validation: each error names the field; none changes anything.
	before := alice.ok("memory_namespace_get_standard", map[string]any{"namespace": "team", "inherit": true})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"id": rules}, "namespace is required"},
		{map[string]any{"namespace": "a//b", "id": rules}, "namespace"},
		{map[string]any{"namespace": "_agents", "id": rules}, "guarded"},
		{map[string]any{"namespace": "team"}, "id is required"},
		{map[string]any{"namespace": "team", "id": "no-such-memory"}, "memory not found"},
		{map[string]any{"namespace": "team", "id": rules, "governance": map[string]any{"write": "maybe"}}, "governance.write"},
		{map[string]any{"namespace": "team", "id": rules, "governance": map[string]any{"promote": "any"}}, "governance.write: is required"},
		{map[string]any{"namespace": "team", "id": rules, "governance": "write any"}, "governance: must be a JSON object"},
		{map[string]any{"namespace": "team", "id": rules, "governance": map[string]any{"write": "approve", "approver": map[string]any{"consensus": 0}}}, "consensus"},
		{map[string]any{"namespace": "team", "id": rules, "parent": "team"}, "parent: must differ from namespace"},
		{map[string]any{"namespace": "team", "id": rules, "owner": "not an id"}, "owner"},
		{map[string]any{"namespace": "team", "id": rules, "tier": "long"}, "tier"},
	} {
		alice.fails("memory_namespace_set_standard", tc.args, tc.want)
	}
	bob.fails("memory_namespace_set_standard", map[string]any{"namespace": "team", "id": rules, "governance": map[string]any{"write": "any"}}, "owned by \"ai:alice\"")
	bob.fails("memory_namespace_clear_standard", map[string]any{"namespace": "team"}, "owned by \"ai:alice\"")
	alice.fails("memory_namespace_set_standard", map[string]any{"namespace": "owned", "id": rules}, "owned by \"ai:carol\"")
	if after := alice.ok("memory_namespace_get_standard", map[string]any{"namespace": "team", "inherit": true}); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused set changed the standard:\n%v\n%v", before, after)
	}
	// The configured owner sets; bob is refused writing below team (owner
	// policy inherited from the parent: the parent's owner, not everyone).
	carol.ok("memory_namespace_set_standard", map[string]any{"namespace": "owned", "id": rules})
	bob.fails("memory_store", map[string]any{"title": "t", "content": "c", "namespace": "team/sub"}, "denied by governance")
	alice.ok("memory_store", map[string]any{"format": "json", "title": "t", "content": "c", "namespace": "team/sub"})

	// get_standard.
	got := bob.ok("memory_namespace_get_standard", map[string]any{"namespace": "team"})
	if got["standard_id"] != rules || got["title"] != "team rules" || got["policy_from"] != "team" || !strings.Contains(fmt.Sprint(got["policy_in_force"]), "write:owner") {
		t.Errorf("get_standard team: %v", got)
	}
	none := bob.ok("memory_namespace_get_standard", map[string]any{"namespace": "elsewhere"})
	if _, has := none["standard_id"]; !has || none["standard_id"] != nil || none["policy_from"] != "default" {
		t.Errorf("get_standard without one: %v", none)
	}
	bob.fails("memory_namespace_get_standard", map[string]any{}, "namespace is required")
	bob.fails("memory_namespace_get_standard", map[string]any{"namespace": "team", "inherit": "yes"}, "inherit: must be true or false")
	bob.fails("memory_namespace_get_standard", map[string]any{"namespace": " "}, "namespace")

	// Recall injects the chain's standards, most general first, out of the memories.
	op.ok("memory_namespace_set_standard", map[string]any{"namespace": "*", "id": global})
	rec := bob.ok("memory_recall", map[string]any{"context": "review merging", "namespace": "team/sub", "format": "json"})
	std, _ := rec["standards"].([]any)
	if len(std) != 2 || !strings.Contains(fmt.Sprint(std[0]), "house rules") || !strings.Contains(fmt.Sprint(std[1]), "team rules") {
		t.Errorf("recall standards: %v", rec)
	}
	if strings.Contains(fmt.Sprint(rec["memories"]), "team rules") {
		t.Errorf("an injected standard is also among the memories: %v", rec["memories"])
	}

	// Operators reassign and clear; clear twice says false.
	op.ok("memory_namespace_set_standard", map[string]any{"namespace": "team", "id": rules, "owner": "ai:bob"})
	bob.ok("memory_store", map[string]any{"format": "json", "title": "t2", "content": "c", "namespace": "team/sub"})
	bob.fails("memory_namespace_clear_standard", map[string]any{}, "namespace is required")
	if c := bob.ok("memory_namespace_clear_standard", map[string]any{"namespace": "team"}); c["cleared"] != true {
		t.Errorf("clear by the new owner: %v", c)
	}
	if c := op.ok("memory_namespace_clear_standard", map[string]any{"namespace": "team"}); c["cleared"] != false {
		t.Errorf("second clear: %v", c)
	}
	alice.ok("memory_store", map[string]any{"format": "json", "title": "t3", "content": "c", "namespace": "team/sub"})
}
