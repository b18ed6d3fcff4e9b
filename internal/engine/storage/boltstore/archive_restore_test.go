package boltstore

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// A restore that merges into the live holder of its title moves the
// restored id's archived links onto that memory, and the store stays
// consistent; a version restored over a live memory keeps the current
// text as a version.
func TestRestoreMergeAndVersionKeepConsistency(t *testing.T) {
	ctx := storagetest.Operator()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	store := func(title, content string) string {
		t.Helper()
		r, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: content, Namespace: "n"}})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetMemory().GetId()
	}
	old, peer := store("Plan", "old"), store("Peer", "p")
	if _, err := records.New(s).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: old, TargetId: peer}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{old}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	cur := store("Plan", "new")
	if _, err := records.New(s).RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: old}); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("restore onto a taken title: %v", err)
	}
	r, err := records.New(s).RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: old, Merge: true})
	if err != nil || !r.Merged || r.Memory.GetId() != cur || r.Memory.GetContent() != "old" || r.LinksRestored != 1 {
		t.Fatalf("merge restore = %v, %v", r, err)
	}
	links, err := records.New(s).GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{cur}})
	if err != nil || len(links.GetLinks()) != 1 || links.GetLinks()[0].GetTargetId() != peer {
		t.Fatalf("links of the merged-into memory = %v, %v", links, err)
	}
	if err := s.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}

	hist, err := records.New(s).GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{cur}, IncludeVersions: true})
	if err != nil || len(hist.GetVersions()) != 1 || hist.GetVersions()[0].GetMemory().GetContent() != "new" {
		t.Fatalf("history = %v, %v", hist, err)
	}
	at := hist.GetVersions()[0].GetArchivedAt()
	back, err := records.New(s).RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: cur, VersionAt: at})
	if err != nil || back.Memory.GetContent() != "new" || back.Memory.GetId() != cur {
		t.Fatalf("version restore = %v, %v", back, err)
	}
	hist, _ = records.New(s).GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{cur}, IncludeVersions: true})
	if len(hist.GetVersions()) != 2 || hist.GetVersions()[1].GetMemory().GetContent() != "old" {
		t.Errorf("history after the version restore = %v", hist.GetVersions())
	}
	if err := s.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
}
