package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/migration"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func exportAll(t *testing.T, s *Store) []*aimemoryv1.ExportRecord { return exportedKinds(t, s) }

// exportedKinds is what Export sends of s's records of kinds (none: all), in order.
func exportedKinds(t testing.TB, s *Store, kinds ...string) []*aimemoryv1.ExportRecord {
	t.Helper()
	var out []*aimemoryv1.ExportRecord
	err := records.New(s).Export(storagetest.Operator(), func(r *aimemoryv1.ExportRecord) error {
		if k, _ := migration.KindOf(r); len(kinds) == 0 || slices.Contains(kinds, k) {
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// importOutcomes is each record's outcome of one Import: "created",
// "unchanged" or "refused: " and why.
func importOutcomes(t testing.TB, s *Store, recs []*aimemoryv1.ExportRecord) []string {
	t.Helper()
	var out []string
	for _, o := range outcomes(t, s, recs) {
		if what, why, _ := strings.Cut(o, " "); what == "refused" {
			out = append(out, "refused: "+why)
		} else {
			out = append(out, what)
		}
	}
	return out
}

func outcomes(t testing.TB, s *Store, recs []*aimemoryv1.ExportRecord) []string {
	t.Helper()
	return storagetest.Outcomes(t, records.New(s), recs)
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

// TestExportPagesEachKeyOnce: an export longer than a batch reads its
// kinds in keyset pages of one snapshot: every memory, version (one id's,
// paged by time), link and entity is sent exactly once, in key order.
func TestExportPagesEachKeyOnce(t *testing.T) {
	s := open(t, storage.Options{})
	n := records.ExportBatchRecords + 2
	mem := func(i int) *aimemoryv1.Memory {
		return &aimemoryv1.Memory{Id: fmt.Sprintf("m%05d", i), Title: fmt.Sprintf("note %d", i), Content: "c", Namespace: "t",
			Tier: "long", Priority: 5, Confidence: 1, CreatedAt: 1, UpdatedAt: 1, CreatedBy: "ai:seed"}
	}
	var recs []*aimemoryv1.ExportRecord
	for i := range n {
		recs = append(recs, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: mem(i)}})
	}
	for i := range n {
		recs = append(recs, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: &aimemoryv1.SupersededVersion{
			At: int64(i + 1), Archived: &aimemoryv1.ArchivedMemory{Memory: mem(0), ArchivedAt: int64(i + 1), Reason: storage.ArchiveReasonSuperseded}}}})
		if i > 0 {
			recs = append(recs, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Link{Link: &aimemoryv1.Link{
				SourceId: mem(0).Id, TargetId: mem(i).Id, Relation: "related_to", ObservedBy: "ai:seed"}}})
		}
		recs = append(recs, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Entity{Entity: &aimemoryv1.EntityAliases{
			Id: mem(i).Id, Aliases: []*aimemoryv1.EntityAlias{{Alias: fmt.Sprintf("a%d", i), AddedBy: "ai:seed"}, {Alias: fmt.Sprintf("b%d", i), AddedBy: "ai:seed"}}}}})
	}
	for i, o := range outcomes(t, s, recs) {
		if o != "created " {
			t.Fatalf("import %d: %s", i, o)
		}
	}
	got := exportAll(t, s)
	if len(got) != len(recs) {
		t.Fatalf("exported %d records, imported %d", len(got), len(recs))
	}
	seen := map[string]bool{}
	for _, r := range got {
		k, m := migration.KindOf(r)
		key := k + " " + prototext.Format(m)
		if seen[key] {
			t.Fatalf("sent twice: %s", key)
		}
		seen[key] = true
	}
	for _, r := range recs {
		if k, m := migration.KindOf(r); !seen[k+" "+prototext.Format(m)] {
			t.Fatalf("not sent: %s %v", k, m)
		}
	}
	var entities, last int64
	for _, r := range got {
		if v := r.GetVersion(); v != nil {
			if v.GetAt() <= last {
				t.Fatalf("version at %d after %d", v.GetAt(), last)
			}
			last = v.GetAt()
		}
		if e := r.GetEntity(); e != nil && len(e.GetAliases()) == 2 {
			entities++
		}
	}
	if entities != int64(n) || last != int64(n) {
		t.Fatalf("entities with both aliases %d, last version %d; want %d", entities, last, n)
	}
}

// TestExportIsOneSnapshot: a standard set while an export is paused in
// its memories is not sent: every kind is read from the snapshot the
// export began with, though it pages each.
func TestExportIsOneSnapshot(t *testing.T) {
	s := open(t, storage.Options{})
	ctx := storagetest.Operator()
	rules := storagetest.Store(t, records.New(s), storagetest.Mem("rules", "team rules", storagetest.InNS("team")))
	paused, resume, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var sent []*aimemoryv1.ExportRecord
	go func() {
		done <- records.New(s).Export(ctx, func(r *aimemoryv1.ExportRecord) error {
			if len(sent) == 0 {
				close(paused)
				<-resume
			}
			sent = append(sent, r)
			return nil
		})
	}()
	testwait.Recv(t, paused, "the export to pause")
	wctx, cancel := context.WithTimeout(ctx, testwait.Deadline) // a write held behind the export fails
	defer cancel()
	_, err := records.New(s).SetStandard(wctx, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: rules.Id, GovernanceJson: `{"write":"approve"}`})
	close(resume)
	if err != nil {
		t.Fatal(err)
	}
	if err := testwait.Recv(t, done, "the resumed export to end"); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0].GetMemory().GetId() != rules.Id {
		t.Fatalf("sent %v; want only the memory there when the export began", sent)
	}
	if got := exportAll(t, s); len(got) != 2 || got[1].GetStandard().GetNamespace() != "team" {
		t.Fatalf("a second export: %v", got)
	}
}
