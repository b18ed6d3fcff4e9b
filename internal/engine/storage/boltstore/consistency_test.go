package boltstore

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// checkConsistent fails t unless every index agrees with the records.
func checkConsistent(t *testing.T, s *Store) {
	t.Helper()
	if err := s.CheckConsistency(storagetest.Operator()); err != nil {
		t.Error(err)
	}
}

func TestIndexAgreesWithRecords(t *testing.T) {
	ctx := storagetest.Operator()
	s, clk := openTest(t, Options{})
	find := func(q string, f *aimemoryv1.Filter) []string {
		return storagetest.TitlesOf(storagetest.Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: q, Filter: f}))
	}

	a := storagetest.Store(t, records.New(s), storagetest.Mem("Deploy checklist", "Run the migrations before deploying", storagetest.Tags("ops")))
	b := storagetest.Store(t, records.New(s), storagetest.Mem("Rollback plan", "Revert the release tag", storagetest.InNS("team/x")))
	storagetest.Store(t, records.New(s), storagetest.Mem("Scratch note", "temporary thought", storagetest.Tier("short")))
	checkConsistent(t, s)

	// Merge replaces content and tags: the old words stop finding it.
	storagetest.Store(t, records.New(s), storagetest.Mem("Deploy checklist", "Canary first then promote", storagetest.Tags("ops", "canary")))
	checkConsistent(t, s)
	if got := find("migrations", nil); len(got) != 0 {
		t.Errorf("after merge, 'migrations' finds %q", got)
	}
	if got := find("canary", nil); !reflect.DeepEqual(got, []string{"Deploy checklist"}) {
		t.Errorf("after merge, 'canary' finds %q", got)
	}

	// Update title, content, tags and namespace at once.
	_, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{
		Id: b.Id, Title: proto.String("Rollback procedure"), Content: proto.String("Redeploy the previous build"),
		SetTags: true, Tags: []string{"incident"}, Namespace: proto.String("team/y"),
	})
	if err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, s)
	for _, q := range []string{"revert", "release", "plan"} {
		if got := find(q, nil); len(got) != 0 {
			t.Errorf("after update, %q finds %q", q, got)
		}
	}
	if got := find("rollback", &aimemoryv1.Filter{Namespace: "team/x"}); len(got) != 0 {
		t.Errorf("old namespace still finds %q", got)
	}
	if got := find("procedure incident", &aimemoryv1.Filter{Namespace: "team/y"}); !reflect.DeepEqual(got, []string{"Rollback procedure"}) {
		t.Errorf("new namespace finds %q", got)
	}
	// The old title is free again, the new one taken.
	storagetest.Store(t, records.New(s), storagetest.Mem("Rollback plan", "a new memory", storagetest.InNS("team/x")))
	checkConsistent(t, s)

	d := storagetest.Store(t, records.New(s), storagetest.Mem("Doomed", "to be deleted soon"))
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{d.Id}}); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, s)
	if got := find("doomed", nil); len(got) != 0 {
		t.Errorf("deleted memory found: %q", got)
	}

	for range 5 {
		if _, err := records.New(s).TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: []string{a.Id}}); err != nil {
			t.Fatal(err)
		}
	}
	checkConsistent(t, s)

	clk.Add(7 * time.Hour)
	if _, err := records.New(s).CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, s)

	if _, err := records.New(s).UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: a.Id, Content: proto.String("Blue green switch")}); err != nil {
		t.Fatal(err)
	}
	checkConsistent(t, s)

	// What was rebuilt from disk agrees too.
	s = reopen(t, s, Options{})
	checkConsistent(t, s)
	if got := find("blue green", nil); !reflect.DeepEqual(got, []string{"Deploy checklist"}) {
		t.Errorf("after reopen, 'blue green' finds %q", got)
	}
}

// TestIndexCompaction deletes most memories so slots are renumbered, then
// checks the index still agrees and still answers.
func TestIndexCompaction(t *testing.T) {
	ctx := storagetest.Operator()
	s, _ := openTest(t, Options{})
	var ids []string
	err := s.write(ctx, func(w *writeTx) error {
		for i := range 3000 {
			m, err := rules.New(storagetest.Mem("note "+itoa(i), "shared words and number "+itoa(i)))
			if err != nil {
				return err
			}
			if err := w.create(m, &aimemoryv1.StoreMemoryResponse{}); err != nil {
				return err
			}
			ids = append(ids, m.Id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: ids[:2900]}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.idx.Sizes(); n != 100 {
		t.Errorf("after compaction %d slots, want 100", n)
	}
	checkConsistent(t, s)
	if got := storagetest.Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "shared 2950"}); len(got) != 1 || got[0].Memory.Title != "note 2950" {
		t.Errorf("search after compaction = %q", storagetest.TitlesOf(got))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
