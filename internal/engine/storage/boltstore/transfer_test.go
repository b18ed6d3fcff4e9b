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
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func exportAll(t *testing.T, s *Store) []*aimemoryv1.ExportRecord {
	t.Helper()
	return storagetest.ExportAll(t, records.New(s))
}

func outcomes(t *testing.T, s *Store, recs []*aimemoryv1.ExportRecord) []string {
	t.Helper()
	return storagetest.Outcomes(t, records.New(s), recs)
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
