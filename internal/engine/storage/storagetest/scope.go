package storagetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// testScopeLimitsReadsAndWrites: a caller with a namespace scope (an HTTP
// principal's grant) writes only inside it, and list, search, recall, get
// and namespace counts show it nothing outside; a caller granted every
// namespace (Operator) sees everything, one without a scope nothing
// (testTenantSeesNothingOfAnother).
func testScopeLimitsReadsAndWrites(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	alice := caller.NewContext(context.Background(), caller.Caller{Principal: "alice", Session: "s", Family: "core", Scope: "team-a shared/"})
	inA := storeAs(t, alice, s, Mem("plan a", "zebra plan", InNS("team-a")))
	below := storeAs(t, alice, s, Mem("plan a2", "zebra notes", InNS("team-a/notes")))
	shared := storeAs(t, alice, s, Mem("plan s", "zebra shared", InNS("shared/x")))
	other := storeAs(t, Operator(), s, Mem("plan b", "zebra other", InNS("team-ab")))
	visible := []string{inA.Id, below.Id, shared.Id}
	slices.Sort(visible)

	for _, ns := range []string{"team-ab", "shared", "global"} {
		_, err := s.StoreMemory(alice, &aimemoryv1.StoreMemoryRequest{Memory: Mem("x", "y", InNS(ns))})
		if !errors.Is(err, storage.ErrDenied) || !strings.Contains(err.Error(), "outside the namespaces alice may use (team-a, shared/)") {
			t.Errorf("store into %s: %v", ns, err)
		}
	}
	if _, err := s.UpdateMemory(alice, &aimemoryv1.UpdateMemoryRequest{Id: inA.Id, Namespace: proto.String("team-ab")}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("move out of scope: %v", err)
	}
	if _, err := s.UpdateMemory(alice, &aimemoryv1.UpdateMemoryRequest{Id: other.Id, Content: proto.String("hijacked")}); err == nil {
		t.Error("an update of a memory outside the scope succeeded")
	}

	ids := func(ms []*aimemoryv1.Memory) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, m.Id)
		}
		slices.Sort(out)
		return out
	}
	l, err := s.ListMemories(alice, &aimemoryv1.ListMemoriesRequest{Limit: 100})
	if err != nil || !slices.Equal(ids(l.Memories), visible) {
		t.Errorf("list = %v, %v, want %v", ids(l.GetMemories()), err, visible)
	}
	for _, req := range []*aimemoryv1.SearchMemoriesRequest{
		{Query: "zebra", Limit: 100},
		{Query: "zebra plan", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Limit: 100},
	} {
		r, err := s.SearchMemories(alice, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []*aimemoryv1.Memory
		for _, sm := range r.Results {
			got = append(got, sm.Memory)
		}
		if !slices.Equal(ids(got), visible) {
			t.Errorf("search %q = %v, want %v", req.Query, ids(got), visible)
		}
	}
	if g := getAs(t, alice, s, other.Id); len(g.Memories) != 0 || len(g.NotFound) != 1 {
		t.Errorf("get outside the scope = %v", g.Memories)
	}
	c, err := s.CountNamespaces(alice, &aimemoryv1.CountNamespacesRequest{})
	if err != nil || c.Total != 3 {
		t.Errorf("namespace counts = %v, %v", c, err)
	}
	// Links: an operator links across; alice cannot (the far end is not
	// found), and does not see it.
	putLinkOK(t, s, inA.Id, other.Id, "related_to", "ops")
	putLinkOK(t, s, inA.Id, below.Id, "related_to", "ops")
	if _, err := s.PutLink(alice, &aimemoryv1.PutLinkRequest{SourceId: inA.Id, TargetId: other.Id, Relation: "supersedes"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("alice links out of her scope: %v", err)
	}
	gl, err := s.GetLinks(alice, &aimemoryv1.GetLinksRequest{Ids: []string{inA.Id, other.Id}, IncludeNodes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(gl.Links) != 1 || gl.Links[0].TargetId != below.Id || len(gl.NotFound) != 1 || gl.NotFound[0] != other.Id {
		t.Errorf("alice's links = %v, not found %v", gl.Links, gl.NotFound)
	}
	for _, n := range gl.Nodes {
		if n.Id == other.Id {
			t.Errorf("alice sees the node %s", n.Namespace)
		}
	}
	tl, err := s.LinkTimeline(alice, &aimemoryv1.LinkTimelineRequest{SourceId: inA.Id})
	if err != nil || len(tl.Events) != 1 || tl.Events[0].Target.Id != below.Id {
		t.Errorf("alice's timeline = %v, %v", tl, err)
	}
	if _, err := s.LinkTimeline(alice, &aimemoryv1.LinkTimelineRequest{SourceId: other.Id}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("timeline of a memory outside the scope: %v", err)
	}
	// A walk neither reports nor passes through what alice may not read:
	// shared is linked from other only.
	putLinkOK(t, s, other.Id, shared.Id, "related_to", "ops")
	tr, err := s.Traverse(alice, &aimemoryv1.TraverseRequest{SourceId: inA.Id, MaxDepth: 3, Limit: 10, Direction: aimemoryv1.Direction_DIRECTION_OUT})
	if err != nil || len(tr.Nodes) != 1 || tr.Nodes[0].Id != below.Id {
		t.Errorf("alice's walk = %v, %v; want below only", tr, err)
	}
	if tr, err := s.Traverse(alice, &aimemoryv1.TraverseRequest{SourceId: other.Id, MaxDepth: 1, Limit: 10}); err != nil || !tr.SourceNotFound || len(tr.Nodes) != 0 {
		t.Errorf("alice's walk from outside the scope = %v, %v", tr, err)
	}
	if _, err := s.RegisterEntity(Operator(), &aimemoryv1.RegisterEntityRequest{CanonicalName: "Zed", Aliases: []string{"zed"}, Namespace: "team-ab"}); err != nil {
		t.Fatal(err)
	}
	if e, err := s.GetEntityByAlias(alice, &aimemoryv1.GetEntityByAliasRequest{Alias: "zed"}); err != nil || e.Entity != nil {
		t.Errorf("alice finds an entity outside her scope: %v, %v", e, err)
	}
	st, err := s.Stats(alice)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range st.ByNamespace {
		if !strings.HasPrefix(n.Key, "team-a") && !strings.HasPrefix(n.Key, "shared/") {
			t.Errorf("stats name the namespace %s", n.Key)
		}
	}
	if st.Total != 3 || st.Links != 0 || st.DbSizeBytes != 0 {
		t.Errorf("alice's stats: total %d, links %d, size %d", st.Total, st.Links, st.DbSizeBytes)
	}
	if gl, _ := s.GetLinks(Operator(), &aimemoryv1.GetLinksRequest{Ids: []string{inA.Id}}); len(gl.Links) != 2 {
		t.Errorf("an operator sees %d links, want 2", len(gl.Links))
	}
	if l, _ := s.ListMemories(Operator(), &aimemoryv1.ListMemoriesRequest{Limit: 100}); len(l.Memories) != 5 {
		t.Errorf("an operator sees %d memories, want 5 (4 and the entity)", len(l.Memories))
	}
}
