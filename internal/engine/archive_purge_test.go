package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// archiveOne stores a memory in ns and deletes it into the archive.
func archiveOne(t *testing.T, ctx context.Context, st storage.Backend, ns, title string) string {
	t.Helper()
	resp, err := st.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "x", Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetMemory().GetId()
	if _, err := st.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	return id
}

func archivedIDs(t *testing.T, st storage.Backend) []string {
	t.Helper()
	resp, err := st.ListArchived(authz.System(storagetest.Operator()), &aimemoryv1.ListArchivedRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range resp.GetArchived() {
		ids = append(ids, a.GetMemory().GetId())
	}
	slices.Sort(ids)
	return ids
}

// The schedule purges rows older than archive_max_days by the injected
// clock, in every namespace (inboxes included), and keeps the rest.
func TestArchivePurgerSchedule(t *testing.T) {
	ctx := storagetest.Operator()
	clock := storagetest.NewClock()
	bst, err := boltstore.Open(ctx, filepath.Join(t.TempDir(), "m.db"), storage.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	st := records.New(bst) // served as the engine serves it
	defer st.Close()

	old := archiveOne(t, ctx, st, "work", "old")
	bob := caller.NewContext(ctx, caller.Caller{Principal: "bob", Scope: caller.AllNamespaces}) // reads its own inbox
	inbox := archiveOne(t, authz.AsOwner(bob, authz.GuardMessages), st, "_messages/bob", "note")
	clock.Add(20 * 24 * time.Hour)
	young := archiveOne(t, ctx, st, "work", "young")

	p := &archivePurger{st: st, maxAge: 30 * 24 * time.Hour, now: clock.Now, log: slog.New(slog.DiscardHandler)}
	tick := make(chan time.Time)
	done := make(chan error)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go p.run(pctx, tick, done)

	if err := testwait.Recv(t, done, "the pass at start"); err != nil { // the pass at start: nothing is 30 days old
		t.Fatal(err)
	}
	want := []string{old, inbox, young}
	slices.Sort(want)
	if got := archivedIDs(t, st); !slices.Equal(got, want) {
		t.Fatalf("after the first pass: %v, want %v", got, want)
	}
	clock.Add(11 * 24 * time.Hour) // old and inbox are 31 days old, young 11
	testwait.Send(t, tick, clock.Now(), "a tick")
	if err := testwait.Recv(t, done, "the pass after 31 days"); err != nil {
		t.Fatal(err)
	}
	if got := archivedIDs(t, st); !slices.Equal(got, []string{young}) {
		t.Errorf("after 31 days: %v, want only %s", got, young)
	}
	if err := bst.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}

// A purge request without a cut-off or ids is refused, never "everything".
func TestPurgeArchiveNeverWidens(t *testing.T) {
	ctx := storagetest.Operator()
	bst, err := boltstore.Open(ctx, filepath.Join(t.TempDir(), "m.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := records.New(bst) // served as the engine serves it
	defer st.Close()
	id := archiveOne(t, ctx, st, "work", "kept")
	for _, req := range []*aimemoryv1.PurgeArchiveRequest{
		{}, {DryRun: true}, {Before: -1}, {Before: 1, Ids: []string{id}}, {Ids: []string{""}},
	} {
		if _, err := st.PurgeArchive(ctx, req); err == nil {
			t.Errorf("PurgeArchive(%v) was accepted", req)
		}
	}
	if got := archivedIDs(t, st); !slices.Equal(got, []string{id}) {
		t.Errorf("archive after refused purges: %v", got)
	}
}
