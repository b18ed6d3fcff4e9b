package storagetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ExportAll is every record s exports, in order.
func ExportAll(t testing.TB, s storage.Backend) []*aimemoryv1.ExportRecord {
	t.Helper()
	var out []*aimemoryv1.ExportRecord
	if err := s.Export(Operator(), func(r *aimemoryv1.ExportRecord) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Outcomes is each record's outcome of one Import, then why when refused.
func Outcomes(t testing.TB, s storage.Backend, recs []*aimemoryv1.ExportRecord) []string {
	t.Helper()
	res, err := s.Import(Operator(), recs)
	if err != nil {
		t.Fatal(err)
	}
	var o []string
	for _, r := range res {
		o = append(o, r.GetOutcome()+" "+r.GetError())
	}
	return o
}

// testExportImportEveryKind: superseded versions, archived links, a
// standard with its policy and owner, a queued action and the agent
// registry travel too. In a fresh store the archive, the standards and the
// queue read as in the source, a second import is unchanged, a re-export
// is the same, and the store is consistent.
func testExportImportEveryKind(t *testing.T, o Opener) {
	owner := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Session: "s1", Family: "core", Scope: caller.AllNamespaces})
	bob := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:bob", Session: "s2", Family: "core", Scope: caller.AllNamespaces})
	graph := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Family: "graph", Scope: caller.AllNamespaces})
	src, clock := o.open(t, storage.Options{})
	a := Store(t, src, Mem("alpha", "first"))
	b := Store(t, src, Mem("beta", "second"))
	c := Store(t, src, Mem("gamma", "third"))
	clock.Add(time.Second)
	if _, err := src.UpdateMemory(owner, &aimemoryv1.UpdateMemoryRequest{Id: a.Id, Content: proto.String("first, edited")}); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{b.Id, c.Id} {
		if _, err := src.PutLink(graph, &aimemoryv1.PutLinkRequest{SourceId: a.Id, TargetId: to, Relation: "related_to"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.DeleteMemories(owner, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{c.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	std, err := src.StoreMemory(owner, &aimemoryv1.StoreMemoryRequest{Memory: Mem("rules", "team rules", InNS("team"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.SetStandard(owner, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: std.Memory.Id, GovernanceJson: `{"write":"approve"}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: Mem("bob's", "queued", InNS("team"))}); err == nil {
		t.Fatal("bob's store into team was not queued")
	}
	if _, err := src.RegisterAgent(owner, &aimemoryv1.RegisterAgentRequest{AgentType: "test", Capabilities: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	recs := ExportAll(t, src)
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[string(r.ProtoReflect().WhichOneof(r.ProtoReflect().Descriptor().Oneofs().ByName("record")).Name())]++
	}
	want := map[string]int{"memory": 4, "archived": 1, "version": 1, "link": 1, "archived_link": 1, "standard": 1, "pending": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("export: %d %s records, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}

	dst, _ := o.open(t, storage.Options{})
	for _, round := range []string{"created ", "unchanged "} {
		for i, got := range Outcomes(t, dst, recs) {
			if got != round {
				t.Errorf("import (%s): record %d: %q", round, i, got)
			}
		}
	}
	// An archived link of other validity is refused, not overwritten.
	i := slices.IndexFunc(recs, func(r *aimemoryv1.ExportRecord) bool { return r.GetArchivedLink() != nil })
	if i < 0 {
		t.Fatal("export has no archived link")
	}
	changed := proto.Clone(recs[i]).(*aimemoryv1.ExportRecord)
	changed.GetArchivedLink().ValidUntil++
	if got := Outcomes(t, dst, []*aimemoryv1.ExportRecord{changed})[0]; !strings.Contains(got, "exists with other validity") {
		t.Errorf("import of a changed archived link: %q", got)
	}
	again := ExportAll(t, dst)
	if len(again) != len(recs) {
		t.Fatalf("re-export: %d records, want %d", len(again), len(recs))
	}
	for i := range recs {
		if !proto.Equal(recs[i], again[i]) {
			t.Errorf("record %d differs after import:\n%v\n%v", i, recs[i], again[i])
		}
	}
	same := func(what string, read func(storage.Backend) (proto.Message, error)) {
		t.Helper()
		w, err1 := read(src)
		g, err2 := read(dst)
		if err1 != nil || err2 != nil || !proto.Equal(w, g) {
			t.Errorf("%s after the round trip:\n got %v %v\nwant %v %v", what, g, err2, w, err1)
		}
	}
	same("archive", func(s storage.Backend) (proto.Message, error) {
		return s.GetArchived(owner, &aimemoryv1.GetArchivedRequest{Ids: []string{c.Id, a.Id}, IncludeVersions: true})
	})
	same("standard", func(s storage.Backend) (proto.Message, error) {
		return s.GetStandard(owner, &aimemoryv1.GetStandardRequest{Namespace: "team", Inherit: true})
	})
	same("pending", func(s storage.Backend) (proto.Message, error) {
		return s.ListPending(owner, &aimemoryv1.ListPendingRequest{Status: "all"})
	})
	same("links", func(s storage.Backend) (proto.Message, error) {
		return s.GetLinks(owner, &aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, IncludeArchived: true})
	})
	check(t, dst)

	// Import is not subject to namespace policies: team's standard (now
	// here) would queue bob's store, and an imported one is written.
	var queued *aimemoryv1.ExportRecord
	for _, r := range recs {
		if r.GetMemory().GetNamespace() == "team" {
			queued = proto.Clone(r).(*aimemoryv1.ExportRecord)
		}
	}
	queued.GetMemory().Id, queued.GetMemory().Title, queued.GetMemory().CreatedBy = "0b6f1c2e-0000-4000-8000-000000000004", "bob's, imported", "ai:bob"
	if got := Outcomes(t, dst, []*aimemoryv1.ExportRecord{queued}); got[0] != "created " {
		t.Errorf("import into a governed namespace: %q", got)
	}

	// Clashes and records the archive would not hold are refused.
	liveEnds := &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_ArchivedLink{ArchivedLink: &aimemoryv1.Link{
		SourceId: a.Id, TargetId: b.Id, Relation: "supersedes", CreatedAt: 1, ValidFrom: 1}}}
	var pending, standard *aimemoryv1.ExportRecord
	for _, r := range recs {
		switch {
		case r.GetPending() != nil:
			pending = proto.Clone(r).(*aimemoryv1.ExportRecord)
		case r.GetStandard() != nil:
			standard = proto.Clone(r).(*aimemoryv1.ExportRecord)
		}
	}
	pending.GetPending().Status = "expired"
	standard.GetStandard().Owner = "ai:mallory"
	got := Outcomes(t, dst, []*aimemoryv1.ExportRecord{liveEnds, pending, standard})
	for i, want := range []string{"both ends are live", "is not pending, approved or rejected", "has another standard"} {
		if !strings.Contains(got[i], want) {
			t.Errorf("record %d: %q, want %q", i, got[i], want)
		}
	}
}
