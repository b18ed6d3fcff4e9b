package pgstore

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

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

// TestImportKeepsRecordsAndRefusesClashes, boltstore's test of the same
// name for the kinds this part moves: memories, an archived memory and a
// superseded version export in order, import into an empty store as they
// were, twice is unchanged, and each clash is refused with its reason
// while the rest of the batch is written.
func TestImportKeepsRecordsAndRefusesClashes(t *testing.T) {
	clock := storagetest.NewClock()
	src := open(t, storage.Options{Now: clock.Now})
	ctx := storagetest.Operator()
	gone := storagetest.Store(t, records.New(src), storagetest.Mem("ephemeral", "short lived", storagetest.Tier("short")))
	clock.Add(7 * time.Hour)
	if _, err := records.New(src).CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil {
		t.Fatal(err)
	}
	a := storagetest.Store(t, records.New(src), storagetest.Mem("alpha", "first"))
	storagetest.Store(t, records.New(src), storagetest.Mem("beta", "second"))
	if _, err := records.New(src).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: a.Id, Content: proto.String("first, edited")}); err != nil {
		t.Fatal(err)
	}
	recs := exportAll(t, src)
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, string(r.ProtoReflect().WhichOneof(r.ProtoReflect().Descriptor().Oneofs().ByName("record")).Name()))
	}
	if strings.Join(kinds, ",") != "memory,memory,archived,version" || recs[2].GetArchived().GetMemory().GetId() != gone.Id {
		t.Fatalf("export: %v", kinds)
	}

	dst := open(t, storage.Options{Now: clock.Now})
	if o := outcomes(t, dst, recs); strings.Join(o, ",") != "created ,created ,created ,created " {
		t.Fatalf("first import: %q", o)
	}
	if o := outcomes(t, dst, recs); strings.Join(o, ",") != "unchanged ,unchanged ,unchanged ,unchanged " {
		t.Fatalf("second import: %q", o)
	}
	again := exportAll(t, dst)
	for i := range recs {
		if !proto.Equal(recs[i], again[i]) {
			t.Errorf("record %d differs after import:\n%v\n%v", i, recs[i], again[i])
		}
	}
	if got, err := records.New(dst).Archived(ctx, gone.Id); err != nil || got.Reason != storage.ArchiveReasonTTL {
		t.Errorf("archived after import: %v %v", got, err)
	}

	changed := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	changed.GetMemory().Content = "edited"
	sameTitle := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	sameTitle.GetMemory().Id = "0b6f1c2e-0000-4000-8000-000000000001"
	fresh := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	fresh.GetMemory().Id, fresh.GetMemory().Title = "0b6f1c2e-0000-4000-8000-000000000003", "gamma"
	freshTwin := proto.Clone(fresh).(*aimemoryv1.ExportRecord)
	freshTwin.GetMemory().Id = "0b6f1c2e-0000-4000-8000-000000000004"
	liveArchived := &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Archived{Archived: &aimemoryv1.ArchivedMemory{
		Memory: recs[0].GetMemory(), ArchivedAt: 1, Reason: "forget"}}}
	otherArchived := proto.Clone(recs[2]).(*aimemoryv1.ExportRecord)
	otherArchived.GetArchived().Reason = "forget"
	otherVersion := proto.Clone(recs[3]).(*aimemoryv1.ExportRecord)
	otherVersion.GetVersion().GetArchived().OriginalTier = "short"
	noTime := proto.Clone(recs[3]).(*aimemoryv1.ExportRecord)
	noTime.GetVersion().At = 0
	bad := proto.Clone(recs[1]).(*aimemoryv1.ExportRecord)
	bad.GetMemory().Id, bad.GetMemory().Title = "0b6f1c2e-0000-4000-8000-000000000005", ""
	o := outcomes(t, dst, []*aimemoryv1.ExportRecord{changed, sameTitle, {}, fresh, freshTwin, liveArchived, otherArchived, otherVersion, noTime, bad})
	for i, want := range []string{"exists with other content", "is taken by memory", "empty record", "created",
		"is taken by memory", "is also a live memory here", "exists with other content", "exists with other content", "at must be set", "title"} {
		if !strings.Contains(o[i], want) {
			t.Errorf("record %d: %q, want %q", i, o[i], want)
		}
	}
	if err := dst.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}

// TestImportedVersionKeepsItsRowTime: a version whose row time and reason
// are not its key time and "superseded" (boltstore writes such a row when
// two versions fall in one clock tick) exports as it was imported.
func TestImportedVersionKeepsItsRowTime(t *testing.T) {
	s := open(t, storage.Options{})
	v := importVersion(t, s, "0b6f1c2e-0000-4000-8000-000000000006", 101, 100)
	if got := exportAll(t, s); len(got) != 1 || !proto.Equal(got[0], v) {
		t.Fatalf("export = %v, want %v", got, v)
	}
}

// TestPurgeDeletesAnImportedVersionByItsKey: such a version is purged by
// its key time, by id and by cut-off, not reported purged and kept.
func TestPurgeDeletesAnImportedVersionByItsKey(t *testing.T) {
	for _, req := range []*aimemoryv1.PurgeArchiveRequest{
		{Ids: []string{"0b6f1c2e-0000-4000-8000-000000000007"}},
		{Before: 102}, // the key time (101) is before it, the row's own (103) is not
	} {
		s := open(t, storage.Options{})
		importVersion(t, s, "0b6f1c2e-0000-4000-8000-000000000007", 101, 103)
		resp, err := records.New(s).PurgeArchive(storagetest.Operator(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetVersionsPurged() != 1 {
			t.Errorf("%v: versions purged = %d, want 1", req, resp.GetVersionsPurged())
		}
		if got := exportAll(t, s); len(got) != 0 {
			t.Errorf("%v: after the purge the export still holds %v", req, got)
		}
	}
}

// importVersion imports a superseded version of memory id keyed at at whose
// own archive time is rowAt (reason "odd"), and returns the record.
func importVersion(t *testing.T, s *Store, id string, at, rowAt int64) *aimemoryv1.ExportRecord {
	t.Helper()
	m := storagetest.Mem("v", "version")
	m.Id, m.Namespace, m.Tier, m.CreatedAt, m.UpdatedAt = id, "global", "mid", 10, 10
	m.Priority, m.Confidence = 5, 1
	v := &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: &aimemoryv1.SupersededVersion{At: at,
		Archived: &aimemoryv1.ArchivedMemory{Memory: m, ArchivedAt: rowAt, Reason: "odd", OriginalTier: "mid"}}}}
	if o := outcomes(t, s, []*aimemoryv1.ExportRecord{v}); o[0] != "created " {
		t.Fatalf("import: %q", o)
	}
	return v
}
