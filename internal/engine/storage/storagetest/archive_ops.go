package storagetest

import (
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// archiveAll deletes memories into the archive.
func archiveAll(t *testing.T, s storage.Backend, ms ...*aimemoryv1.Memory) {
	t.Helper()
	for _, m := range ms {
		if _, err := s.DeleteMemories(Operator(), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{m.Id}, Archive: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// testArchiveListStatsPurge pins the archive's reads and its purge: list
// newest first with paging and a namespace filter, stats by reason and
// namespace, a purge by cut-off that takes only older rows (and old
// superseded versions), by ids, and never anything without one of them.
func testArchiveListStatsPurge(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	a := Store(t, s, Mem("A", "x", InNS("p")))
	b := Store(t, s, Mem("B", "x", InNS("p")))
	archiveAll(t, s, a)
	clk.Add(10 * 24 * time.Hour)
	archiveAll(t, s, b)
	c := Store(t, s, Mem("C", "x", InNS("q")))
	archiveAll(t, s, c)

	l, err := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{})
	if err != nil || l.Total != 3 || len(l.Archived) != 3 || l.Archived[2].GetMemory().GetId() != a.Id {
		t.Fatalf("list = %v, %v", l, err)
	}
	if l, _ := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{Namespace: "p", Limit: 1, Offset: 1}); l.Total != 2 || len(l.Archived) != 1 || l.Archived[0].GetMemory().GetId() != a.Id {
		t.Errorf("list p page 2 = %v", l)
	}
	if _, err := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{Limit: 1001}); err == nil {
		t.Error("limit 1001 accepted")
	}
	st, err := s.ArchiveStats(ctx)
	if err != nil || st.Total != 3 || st.OldestAt >= st.NewestAt || st.SizeBytes == 0 ||
		len(st.ByNamespace) != 2 || st.ByNamespace[0].Key != "p" || st.ByNamespace[0].Count != 2 ||
		len(st.ByReason) != 1 || st.ByReason[0].Key != storage.ArchiveReasonDelete {
		t.Errorf("stats = %v, %v", st, err)
	}

	for _, bad := range []*aimemoryv1.PurgeArchiveRequest{{}, {DryRun: true}, {Before: -5}, {Before: 1, Ids: []string{a.Id}}, {Ids: []string{""}}} {
		if _, err := s.PurgeArchive(ctx, bad); err == nil {
			t.Errorf("purge %v accepted", bad)
		}
	}
	cut := clk.Now().Add(-5 * 24 * time.Hour).UnixNano() // a is 10 days old, b and c fresh
	dry, err := s.PurgeArchive(ctx, &aimemoryv1.PurgeArchiveRequest{Before: cut, DryRun: true})
	if err != nil || dry.Purged != 1 || len(dry.Memories) != 1 || dry.Memories[0].Id != a.Id {
		t.Fatalf("dry run = %v, %v", dry, err)
	}
	if l, _ := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{}); l.Total != 3 {
		t.Errorf("a dry run purged: %v", l)
	}
	if r, err := s.PurgeArchive(ctx, &aimemoryv1.PurgeArchiveRequest{Before: cut}); err != nil || r.Purged != 1 {
		t.Errorf("purge by cut-off = %v, %v", r, err)
	}
	r, err := s.PurgeArchive(ctx, &aimemoryv1.PurgeArchiveRequest{Ids: []string{c.Id, a.Id}})
	if err != nil || r.Purged != 1 || len(r.NotFound) != 1 || r.NotFound[0] != a.Id {
		t.Errorf("purge by ids = %v, %v", r, err)
	}
	if l, _ := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{}); l.Total != 1 || l.Archived[0].GetMemory().GetId() != b.Id {
		t.Errorf("left after purges: %v", l)
	}
	check(t, s)
}

// testPurgeByVersionKey: a superseded version is purged by its key time
// (what restore's version_at names), by cut-off and by id, even when its
// row keeps another time of its own (an imported one: 101 and 103 here).
func testPurgeByVersionKey(t *testing.T, o Opener) {
	ctx := Operator()
	m := Mem("v", "version")
	m.Id, m.Namespace, m.Tier, m.CreatedAt, m.UpdatedAt = "0b6f1c2e-0000-4000-8000-000000000008", "global", "mid", 10, 10
	m.Priority, m.Confidence = 5, 1
	v := &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: &aimemoryv1.SupersededVersion{At: 101,
		Archived: &aimemoryv1.ArchivedMemory{Memory: m, ArchivedAt: 103, Reason: "odd", OriginalTier: "mid"}}}}
	for _, req := range []*aimemoryv1.PurgeArchiveRequest{{Before: 102}, {Ids: []string{m.Id}}} {
		s, _ := o.open(t, storage.Options{})
		if res, err := s.Import(ctx, []*aimemoryv1.ExportRecord{v}); err != nil || res[0].GetOutcome() != "created" {
			t.Fatalf("import = %v, %v", res, err)
		}
		if r, err := s.PurgeArchive(ctx, req); err != nil || r.VersionsPurged != 1 {
			t.Errorf("purge %v = %v, %v; want 1 version purged", req, r, err)
		}
		if l, err := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{Reason: storage.ArchiveReasonSuperseded}); err != nil || l.Total != 0 {
			t.Errorf("after purge %v the versions are %v, %v", req, l, err)
		}
		check(t, s)
	}
}

// testPurgeTakesArchivedLinks: purging an archive row deletes the links
// kept in the archive with it as an end, whichever side, and no other.
func testPurgeTakesArchivedLinks(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	a, b, c, d := Store(t, s, Mem("A", "x")), Store(t, s, Mem("B", "x")), Store(t, s, Mem("C", "x")), Store(t, s, Mem("D", "x"))
	link(t, s, a.Id, b.Id)
	link(t, s, c.Id, a.Id)
	link(t, s, b.Id, d.Id)
	archiveAll(t, s, a, b, d)
	if r, err := s.PurgeArchive(ctx, &aimemoryv1.PurgeArchiveRequest{Ids: []string{a.Id}}); err != nil || r.Purged != 1 {
		t.Fatalf("purge = %v, %v", r, err)
	}
	var kept []string
	for _, r := range ExportAll(t, s) {
		if l := r.GetArchivedLink(); l != nil {
			kept = append(kept, l.SourceId+">"+l.TargetId)
		}
	}
	if want := []string{b.Id + ">" + d.Id}; !slices.Equal(kept, want) {
		t.Errorf("archived links after purging A = %v, want %v", kept, want)
	}
	check(t, s)
}

// testRestoreVersionAndMerge: a superseded version can be restored over
// the live memory, and a restore onto a taken title merges on request.
func testRestoreVersionAndMerge(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	m := Store(t, s, Mem("Doc", "one", Tier("mid")))
	clk.Add(time.Hour)
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Content: proto.String("two")}); err != nil {
		t.Fatal(err)
	}
	h, err := s.GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{m.Id}, IncludeVersions: true})
	if err != nil || len(h.Versions) != 1 {
		t.Fatalf("history = %v, %v", h, err)
	}
	clk.Add(time.Hour)
	r, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: m.Id, VersionAt: h.Versions[0].ArchivedAt})
	if err != nil || r.Memory.GetContent() != "one" || r.Memory.GetExpiresAt() != clk.Now().Add(7*24*time.Hour).UnixNano() {
		t.Fatalf("version restore = %v, %v", r, err)
	}
	if _, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: m.Id, VersionAt: 12345}); err == nil {
		t.Error("restore of an unknown version accepted")
	}

	gone := Store(t, s, Mem("Title", "archived text"))
	archiveAll(t, s, gone)
	holder := Store(t, s, Mem("Title", "live text"))
	if _, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: gone.Id}); err == nil {
		t.Fatal("restore onto a taken title accepted")
	}
	mr, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: gone.Id, Merge: true})
	if err != nil || !mr.Merged || mr.Memory.GetId() != holder.Id || mr.Memory.GetContent() != "archived text" {
		t.Fatalf("merge restore = %v, %v", mr, err)
	}
	if _, err := s.Archived(ctx, gone.Id); err == nil {
		t.Error("the merged archive row is still there")
	}
	check(t, s)
}
