package boltstore

import (
	"context"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

func exportAll(t *testing.T, s *Store) []*aimemoryv1.ExportRecord {
	t.Helper()
	var out []*aimemoryv1.ExportRecord
	if err := s.Export(storagetest.Operator(), func(r *aimemoryv1.ExportRecord) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func outcomes(t *testing.T, s *Store, recs []*aimemoryv1.ExportRecord) []string {
	t.Helper()
	res, err := s.Import(storagetest.Operator(), recs)
	if err != nil {
		t.Fatal(err)
	}
	var o []string
	for _, r := range res {
		o = append(o, r.GetOutcome()+" "+r.GetError())
	}
	return o
}

// TestImportKeepsRecordsAndRefusesClashes: an export imports into an empty
// store as it was, twice is unchanged, and each kind of clash is refused
// with its reason while the rest of the batch is written.
func TestImportKeepsRecordsAndRefusesClashes(t *testing.T) {
	src, clock := openTest(t, Options{})
	gone := storagetest.Store(t, records.New(src), storagetest.Mem("ephemeral", "short lived", storagetest.Tier("short")))
	clock.Add(7 * time.Hour)
	if _, err := records.New(src).CollectGarbage(storagetest.Operator(), &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil {
		t.Fatal(err)
	}
	a := storagetest.Store(t, records.New(src), storagetest.Mem("alpha", "first"))
	b := storagetest.Store(t, records.New(src), storagetest.Mem("beta", "second"))
	if _, err := records.New(src).PutLink(caller.NewContext(context.Background(), caller.Caller{Principal: "ai:test", Family: "graph", Scope: caller.AllNamespaces}), &aimemoryv1.PutLinkRequest{SourceId: a.Id, TargetId: b.Id, Relation: "related_to"}); err != nil {
		t.Fatal(err)
	}
	recs := exportAll(t, src)
	if len(recs) != 4 || recs[2].GetArchived().GetMemory().GetId() != gone.Id {
		t.Fatalf("export: %d records: %v", len(recs), recs)
	}

	dst, _ := openTest(t, Options{})
	if o := outcomes(t, dst, recs); strings.Join(o, ",") != "created ,created ,created ,created " {
		t.Fatalf("first import: %q", o)
	}
	if o := outcomes(t, dst, recs); strings.Join(o, ",") != "unchanged ,unchanged ,unchanged ,unchanged " {
		t.Fatalf("second import: %q", o)
	}
	if got, err := records.New(dst).Archived(storagetest.Operator(), gone.Id); err != nil || got.Reason != "ttl_expired" {
		t.Errorf("archived after import: %v %v", got, err)
	}
	again := exportAll(t, dst)
	for i := range recs {
		if !proto.Equal(recs[i], again[i]) {
			t.Errorf("record %d differs after import:\n%v\n%v", i, recs[i], again[i])
		}
	}

	changed := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	changed.GetMemory().Content = "edited"
	sameTitle := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	sameTitle.GetMemory().Id = "0b6f1c2e-0000-4000-8000-000000000001"
	orphan := &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Link{Link: &aimemoryv1.Link{
		SourceId: a.Id, TargetId: "0b6f1c2e-0000-4000-8000-000000000002", Relation: "related_to", CreatedAt: 1, ValidFrom: 1}}}
	fresh := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	fresh.GetMemory().Id, fresh.GetMemory().Title = "0b6f1c2e-0000-4000-8000-000000000003", "gamma"
	o := outcomes(t, dst, []*aimemoryv1.ExportRecord{changed, sameTitle, orphan, {}, fresh})
	for i, want := range []string{"exists with other content", "is taken by memory", "is not there", "empty record", "created"} {
		if !strings.Contains(o[i], want) {
			t.Errorf("record %d: %q, want %q", i, o[i], want)
		}
	}
}

// TestExportImportEveryKind: superseded versions, archived links, a
// standard with its policy and owner, a queued action and the agent
// registry travel too. In a fresh store the archive, the standards and the
// queue read as in the source, a second import is unchanged, a re-export
// is the same, and the store is consistent.
func TestExportImportEveryKind(t *testing.T) {
	owner := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Session: "s1", Family: "core", Scope: caller.AllNamespaces})
	bob := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:bob", Session: "s2", Family: "core", Scope: caller.AllNamespaces})
	graph := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Family: "graph", Scope: caller.AllNamespaces})
	src, clock := openTest(t, Options{})
	a := storagetest.Store(t, records.New(src), storagetest.Mem("alpha", "first"))
	b := storagetest.Store(t, records.New(src), storagetest.Mem("beta", "second"))
	c := storagetest.Store(t, records.New(src), storagetest.Mem("gamma", "third"))
	clock.Add(time.Second)
	if _, err := records.New(src).UpdateMemory(owner, &aimemoryv1.UpdateMemoryRequest{Id: a.Id, Content: proto.String("first, edited")}); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{b.Id, c.Id} {
		if _, err := records.New(src).PutLink(graph, &aimemoryv1.PutLinkRequest{SourceId: a.Id, TargetId: to, Relation: "related_to"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := records.New(src).DeleteMemories(owner, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{c.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	std, err := records.New(src).StoreMemory(owner, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("rules", "team rules", storagetest.InNS("team"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(src).SetStandard(owner, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: std.Memory.Id, GovernanceJson: `{"write":"approve"}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(src).StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("bob's", "queued", storagetest.InNS("team"))}); err == nil {
		t.Fatal("bob's store into team was not queued")
	}
	if _, err := records.New(src).RegisterAgent(owner, &aimemoryv1.RegisterAgentRequest{AgentType: "test", Capabilities: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	recs := exportAll(t, src)
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

	dst, _ := openTest(t, Options{})
	for _, round := range []string{"created ", "unchanged "} {
		for i, o := range outcomes(t, dst, recs) {
			if o != round {
				t.Errorf("import (%s): record %d: %q", round, i, o)
			}
		}
	}
	again := exportAll(t, dst)
	if len(again) != len(recs) {
		t.Fatalf("re-export: %d records, want %d", len(again), len(recs))
	}
	for i := range recs {
		if !proto.Equal(recs[i], again[i]) {
			t.Errorf("record %d differs after import:\n%v\n%v", i, recs[i], again[i])
		}
	}
	same := func(what string, read func(*Store) (proto.Message, error)) {
		t.Helper()
		w, err1 := read(src)
		g, err2 := read(dst)
		if err1 != nil || err2 != nil || !proto.Equal(w, g) {
			t.Errorf("%s after the round trip:\n got %v %v\nwant %v %v", what, g, err2, w, err1)
		}
	}
	same("archive", func(s *Store) (proto.Message, error) {
		return records.New(s).GetArchived(owner, &aimemoryv1.GetArchivedRequest{Ids: []string{c.Id, a.Id}, IncludeVersions: true})
	})
	same("standard", func(s *Store) (proto.Message, error) {
		return records.New(s).GetStandard(owner, &aimemoryv1.GetStandardRequest{Namespace: "team", Inherit: true})
	})
	same("pending", func(s *Store) (proto.Message, error) {
		return records.New(s).ListPending(owner, &aimemoryv1.ListPendingRequest{Status: "all"})
	})
	same("links", func(s *Store) (proto.Message, error) {
		return records.New(s).GetLinks(owner, &aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, IncludeArchived: true})
	})
	if err := dst.CheckConsistency(storagetest.Operator()); err != nil {
		t.Errorf("consistency after import: %v", err)
	}

	// Import is not subject to namespace policies: team's standard (now
	// here) would queue bob's store, and an imported one is written.
	var queued *aimemoryv1.ExportRecord
	for _, r := range recs {
		if r.GetMemory().GetNamespace() == "team" {
			queued = proto.Clone(r).(*aimemoryv1.ExportRecord)
		}
	}
	queued.GetMemory().Id, queued.GetMemory().Title, queued.GetMemory().CreatedBy = "0b6f1c2e-0000-4000-8000-000000000004", "bob's, imported", "ai:bob"
	if o := outcomes(t, dst, []*aimemoryv1.ExportRecord{queued}); o[0] != "created " {
		t.Errorf("import into a governed namespace: %q", o)
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
	o := outcomes(t, dst, []*aimemoryv1.ExportRecord{liveEnds, pending, standard})
	for i, want := range []string{"both ends are live", "is not pending, approved or rejected", "has another standard"} {
		if !strings.Contains(o[i], want) {
			t.Errorf("record %d: %q, want %q", i, o[i], want)
		}
	}
}

// TestImportSubscription: a subscription imports with its sealed secret
// as given, receives only events logged after the import (none of the
// import's own writes), is unchanged by a second import whatever its
// sealed bytes, and a clash with another target is refused.
func TestImportSubscription(t *testing.T) {
	src, _ := openTest(t, Options{})
	sub := &storage.Subscription{ID: "0b6f1c2e-0000-4000-8000-00000000000a", URL: "https://hooks.example/x", Events: []string{"memory_store"},
		SealedSecret: []byte("sealed bytes"), CreatedBy: "ai:alice", CreatedAt: 5}
	if err := src.PutSubscription(storagetest.Operator(), sub); err != nil {
		t.Fatal(err)
	}
	storagetest.Store(t, records.New(src), storagetest.Mem("alpha", "first"))
	recs := exportAll(t, src)
	if got := recs[len(recs)-1].GetSubscription(); got.GetId() != sub.ID || string(got.GetSealedSecret()) != "sealed bytes" {
		t.Fatalf("last exported record: %v", recs[len(recs)-1])
	}
	dst, _ := openTest(t, Options{})
	if o := outcomes(t, dst, recs); strings.Join(o, ",") != "created ,created " {
		t.Fatalf("import: %q", o)
	}
	resealed := proto.Clone(recs[1]).(*aimemoryv1.ExportRecord)
	resealed.GetSubscription().SealedSecret = []byte("sealed again")
	moved := proto.Clone(recs[1]).(*aimemoryv1.ExportRecord)
	moved.GetSubscription().Url = "https://elsewhere.example/x"
	if o := outcomes(t, dst, []*aimemoryv1.ExportRecord{recs[0], resealed, moved}); o[0] != "unchanged " || o[1] != "unchanged " || !strings.Contains(o[2], "another target") {
		t.Errorf("second import: %q", o)
	}
	subs, err := dst.ListSubscriptions(storagetest.Operator())
	if err != nil || len(subs) != 1 {
		t.Fatalf("subscriptions: %v %v", subs, err)
	}
	var seq uint64
	dst.db.View(func(tx *bolt.Tx) error { seq = tx.Bucket(bucketEventsLog).Sequence(); return nil })
	if subs[0].FromSeq != seq || seq == 0 || string(subs[0].SealedSecret) != "sealed bytes" {
		t.Errorf("imported subscription from_seq %d (log at %d), secret %q", subs[0].FromSeq, seq, subs[0].SealedSecret)
	}
}
