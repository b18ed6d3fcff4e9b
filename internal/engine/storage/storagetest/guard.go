package storagetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// guardedErr checks that err refuses a write into a guarded namespace,
// naming the namespace and the rule.
func guardedErr(t *testing.T, what string, err error, ns string) {
	t.Helper()
	var ge *authz.GuardedError
	if !errors.Is(err, storage.ErrDenied) || !errors.As(err, &ge) || ge.Namespace != ns ||
		!strings.Contains(err.Error(), "'"+ns+"' is guarded (namespaces beginning with '_' are reserved)") {
		t.Errorf("%s: err = %v, want the guard of %s", what, err, ns)
	}
}

// testGuardedNamespacesRefuseOrdinaryWrites: no ordinary write RPC writes
// into, out of, or about a memory in a namespace beginning with "_", for
// any caller, its own inbox included; only the owner's internal write
// path (authz.AsOwner) does, and only in the namespaces it owns.
func testGuardedNamespacesRefuseOrdinaryWrites(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	bob := as("ai:bob")
	ordinary := storeAs(t, bob, s, Mem("Plain", "x", InNS("team")))

	for _, ns := range []string{"_agents", "_messages/ai:bob", "_messages/ai:carol", "_other", "_"} {
		_, err := s.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: Mem("m", "x", InNS(ns))})
		guardedErr(t, "store into "+ns, err, ns)
		if _, err := s.StoreMemory(noCaller, &aimemoryv1.StoreMemoryRequest{Memory: Mem("m", "x", InNS(ns))}); !errors.Is(err, storage.ErrDenied) {
			t.Errorf("store into %s without a caller: %v", ns, err)
		}
		_, err = s.UpdateMemory(bob, &aimemoryv1.UpdateMemoryRequest{Id: ordinary.Id, Namespace: proto.String(ns)})
		guardedErr(t, "move into "+ns, err, ns)
		_, err = s.RegisterEntity(bob, &aimemoryv1.RegisterEntityRequest{CanonicalName: "E", Namespace: ns})
		guardedErr(t, "entity in "+ns, err, ns)
	}
	if err := (&authz.GuardedError{Namespace: "_agents", Op: string(storage.OpStore), Guard: authz.GuardAgents}).Error(); !strings.Contains(err, "only the agent registry writes there; store refused") {
		t.Errorf("guard message %q does not name the rule's owner", err)
	}

	// The owners' internal path writes where it owns, and nowhere else.
	registry := authz.AsOwner(bob, authz.GuardAgents)
	messaging := authz.AsOwner(bob, authz.GuardMessages)
	agent := storeAs(t, registry, s, Mem("ai:bob", "an agent", InNS("_agents")))
	msg := storeAs(t, messaging, s, Mem("hello", "to carol", InNS("_messages/ai:carol")))
	for _, tc := range []struct {
		ctx context.Context
		ns  string
	}{{registry, "_messages/ai:carol"}, {messaging, "_agents"}, {registry, "_other"}, {messaging, "_other"}} {
		_, err := s.StoreMemory(tc.ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("m2", "x", InNS(tc.ns))})
		guardedErr(t, "owner of another namespace storing into "+tc.ns, err, tc.ns)
	}
	// Messaging writes into inboxes it does not read: the message is not
	// found for a link.
	if _, err := s.PutLink(messaging, &aimemoryv1.PutLinkRequest{SourceId: msg.Id, TargetId: agent.Id}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a link spanning two owners' namespaces: %v", err)
	}
	before := stats(t, s)

	// Ordinary writes about guarded memories.
	_, err := s.UpdateMemory(bob, &aimemoryv1.UpdateMemoryRequest{Id: agent.Id, Content: proto.String("edited")})
	guardedErr(t, "update in _agents", err, "_agents")
	_, err = s.UpdateMemory(bob, &aimemoryv1.UpdateMemoryRequest{Id: agent.Id, Namespace: proto.String("team")})
	guardedErr(t, "move out of _agents", err, "_agents")
	_, err = s.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: Mem("hello", "overwrite", InNS("_messages/ai:carol"))})
	guardedErr(t, "merge into an inbox", err, "_messages/ai:carol")
	_, err = s.DeleteMemories(bob, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{ordinary.Id, agent.Id}})
	guardedErr(t, "delete in _agents", err, "_agents")
	// Another's inbox is not there for a delete, even an operator's.
	if d, err := s.DeleteMemories(Operator(), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{msg.Id}}); err != nil || len(d.Deleted) != 0 || len(d.NotFound) != 1 {
		t.Errorf("delete of a message = %v, %v; want it not found", d, err)
	}
	_, err = s.PutLink(bob, &aimemoryv1.PutLinkRequest{SourceId: ordinary.Id, TargetId: agent.Id})
	guardedErr(t, "link to _agents", err, "_agents")
	_, err = s.PutLink(bob, &aimemoryv1.PutLinkRequest{SourceId: agent.Id, TargetId: ordinary.Id})
	guardedErr(t, "link from _agents", err, "_agents")
	_, err = s.RegisterEntity(bob, &aimemoryv1.RegisterEntityRequest{CanonicalName: "ai:bob", Namespace: "_agents"})
	if !errors.Is(err, storage.ErrDenied) && !errors.Is(err, storage.ErrConflict) {
		t.Errorf("entity over a registry entry: %v", err)
	}
	touched, err := s.TouchMemories(bob, &aimemoryv1.TouchMemoriesRequest{Ids: []string{agent.Id, msg.Id}})
	if err != nil || len(touched.Memories) != 0 {
		t.Errorf("touch of guarded memories = %v, %v: want them skipped", touched, err)
	}

	after := stats(t, s)
	// The file's size is not a record: PostgreSQL's moves with its own upkeep.
	before.DbSizeBytes, after.DbSizeBytes = 0, 0
	if !proto.Equal(before, after) || get(t, s, agent.Id).AccessCount != 0 || get(t, s, agent.Id).Content != "an agent" || get(t, s, ordinary.Id) == nil {
		t.Errorf("refused writes wrote: %v → %v", before, after)
	}
	check(t, s)
}

// testInboxReadableByOwnerOnly: list, get (by id or prefix), search,
// recall and the namespace counts never show another identity's inbox;
// without a caller nothing is readable. Other guarded namespaces read
// like any.
func testInboxReadableByOwnerOnly(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	messaging := authz.AsOwner(as("ai:sender"), authz.GuardMessages)
	toBob := storeAs(t, messaging, s, Mem("Deploy note for bob", "the secret word is kiwi", InNS("_messages/ai:bob")))
	toCarol := storeAs(t, messaging, s, Mem("Deploy note for carol", "the secret word is plum", InNS("_messages/ai:carol")))
	agent := storeAs(t, authz.AsOwner(as("ai:bob"), authz.GuardAgents), s, Mem("ai:bob", "secret agent entry", InNS("_agents")))
	plain := storeAs(t, as("ai:bob"), s, Mem("Deploy checklist", "no secret here", InNS("team")))

	for _, tc := range []struct {
		who     string
		ctx     context.Context
		visible []string // ids, sorted
	}{
		{"bob", as("ai:bob"), []string{toBob.Id, agent.Id, plain.Id}},
		{"carol", as("ai:carol"), []string{toCarol.Id, agent.Id, plain.Id}},
		{"no caller", noCaller, []string{}},
	} {
		slices.Sort(tc.visible)
		ids := func(ms []*aimemoryv1.Memory) []string {
			out := []string{}
			for _, m := range ms {
				out = append(out, m.Id)
			}
			slices.Sort(out)
			return out
		}
		l, err := s.ListMemories(tc.ctx, &aimemoryv1.ListMemoriesRequest{Limit: 100})
		if err != nil || !slices.Equal(ids(l.Memories), tc.visible) {
			t.Errorf("%s: list = %v, %v, want %v", tc.who, ids(l.GetMemories()), err, tc.visible)
		}
		for _, inbox := range []string{"_messages/ai:bob", "_messages/ai:carol"} {
			l, err := s.ListMemories(tc.ctx, &aimemoryv1.ListMemoriesRequest{Filter: &aimemoryv1.Filter{Namespace: inbox}, Limit: 100})
			own := (inbox == "_messages/ai:bob" && tc.who == "bob") || (inbox == "_messages/ai:carol" && tc.who == "carol")
			if err != nil || (len(l.Memories) == 1) != own || len(l.Memories) > 1 {
				t.Errorf("%s: list of %s = %v, %v", tc.who, inbox, ids(l.GetMemories()), err)
			}
		}
		for _, req := range []*aimemoryv1.SearchMemoriesRequest{
			{Query: "secret", Limit: 100},
			{Query: "deploy word", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Limit: 100},
		} {
			r, err := s.SearchMemories(tc.ctx, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []*aimemoryv1.Memory
			for _, sm := range r.Results {
				got = append(got, sm.Memory)
				if strings.HasPrefix(sm.Memory.Namespace, authz.InboxPrefix) && !slices.Contains(tc.visible, sm.Memory.Id) {
					t.Errorf("%s: %q returned another's message %s", tc.who, req.Query, sm.Memory.Namespace)
				}
			}
			if (len(got) == 0) != (len(tc.visible) == 0) {
				t.Errorf("%s: %q found %d", tc.who, req.Query, len(got))
			}
		}
		g := getAs(t, tc.ctx, s, toBob.Id, toCarol.Id, agent.Id)
		if !slices.Equal(ids(g.Memories), intersect(tc.visible, toBob.Id, toCarol.Id, agent.Id)) || len(g.Memories)+len(g.NotFound) != 3 {
			t.Errorf("%s: get = %v, not found %v", tc.who, ids(g.Memories), g.NotFound)
		}
		for _, m := range []*aimemoryv1.Memory{toBob, toCarol} {
			r, err := s.GetMemories(tc.ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{m.Id[:13]}, AllowPrefix: true})
			if err != nil || (len(r.Memories) == 1) != slices.Contains(tc.visible, m.Id) {
				t.Errorf("%s: get by prefix of %s = %v, %v", tc.who, m.Namespace, r, err)
			}
		}
		c, err := s.CountNamespaces(tc.ctx, &aimemoryv1.CountNamespacesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range c.Namespaces {
			if strings.HasPrefix(n.Key, authz.InboxPrefix) && !authz.Of(tc.ctx).Reads(n.Key) {
				t.Errorf("%s: namespace counts show %s", tc.who, n.Key)
			}
		}
		if c.Total != uint64(len(tc.visible)) {
			t.Errorf("%s: namespace total %d, want %d", tc.who, c.Total, len(tc.visible))
		}
	}
}

// intersect is the sorted ids of want that are in have.
func intersect(have []string, want ...string) []string {
	out := []string{}
	for _, id := range want {
		if slices.Contains(have, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// testFamilyKeyspaceIsTheFamilysOwn: a family's keyspace (_family/<name>)
// is written and read through the ordinary operations by calls for that
// family, and is invisible and closed to every other caller: another
// family, the host, no caller, and a family whose name is a prefix.
func testFamilyKeyspaceIsTheFamilysOwn(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	family := func(f string) context.Context {
		return caller.NewContext(context.Background(), caller.Caller{Principal: "ai:bob", Session: "s", Family: f, Scope: caller.AllNamespaces})
	}
	notes := family("notes")
	plain := storeAs(t, family("core"), s, Mem("Deploy", "kiwi plain", InNS("team")))
	task := storeAs(t, notes, s, Mem("ship kiwi", "kiwi task", InNS(authz.FamilyPrefix+"notes")))
	sub := storeAs(t, notes, s, Mem("nested", "kiwi nested", InNS(authz.FamilyPrefix+"notes/archive")))
	if _, err := s.PutLink(notes, &aimemoryv1.PutLinkRequest{SourceId: task.Id, TargetId: plain.Id}); err != nil {
		t.Fatalf("linking the family's state to a memory: %v", err)
	}
	if _, err := s.UpdateMemory(notes, &aimemoryv1.UpdateMemoryRequest{Id: task.Id, SetTags: true, Tags: []string{"done"}}); err != nil {
		t.Fatalf("family updating its state: %v", err)
	}
	if l, err := s.ListMemories(notes, &aimemoryv1.ListMemoriesRequest{Filter: &aimemoryv1.Filter{Namespace: authz.FamilyPrefix + "notes"}, Limit: 10}); err != nil || len(l.Memories) != 1 {
		t.Fatalf("family listing its keyspace: %v %v", l, err)
	}

	for name, ctx := range map[string]context.Context{"other": family("other"), "host": family(caller.HostFamily), "prefix": family("note"), "no caller": noCaller} {
		want := 1 // the plain memory; without a caller, nothing
		if ctx == noCaller {
			want = 0
		}
		l, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 100})
		if err != nil || len(l.Memories) != want || (want == 1 && l.Memories[0].Id != plain.Id) {
			t.Errorf("%s: list = %v %v, want only the plain memory", name, l.GetMemories(), err)
		}
		r, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "kiwi", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Limit: 100}, nil)
		if err != nil || len(r.Results) != want {
			t.Errorf("%s: search = %v %v, want only the plain memory", name, r.GetResults(), err)
		}
		if g := getAs(t, ctx, s, task.Id, sub.Id); len(g.Memories) != 0 {
			t.Errorf("%s: get returned the family's state", name)
		}
		c, err := s.CountNamespaces(ctx, &aimemoryv1.CountNamespacesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range c.Namespaces {
			if strings.HasPrefix(n.Key, authz.FamilyPrefix) {
				t.Errorf("%s: namespace counts show %s", name, n.Key)
			}
		}
		_, err = s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("ship kiwi", "overwritten", InNS(authz.FamilyPrefix+"notes"))})
		if ctx == noCaller {
			if !errors.Is(err, storage.ErrDenied) {
				t.Errorf("%s: store into the keyspace: %v", name, err)
			}
		} else {
			guardedErr(t, name+": store into the keyspace", err, authz.FamilyPrefix+"notes")
		}
		_, err = s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: plain.Id, Namespace: proto.String(authz.FamilyPrefix + "notes")})
		if err == nil {
			t.Errorf("%s: moved a memory into the keyspace", name)
		}
		_, err = s.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: plain.Id, TargetId: task.Id})
		if err == nil {
			t.Errorf("%s: linked to the family's state", name)
		}
	}
	if FamilyOf := authz.FamilyOf(authz.FamilyPrefix + "notes/archive"); FamilyOf != "notes" {
		t.Errorf("FamilyOf = %q", FamilyOf)
	}
	check(t, s)
}
