package pgstore

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestArchivedLinksMoveBack: archiving moves a memory's links to the
// archive in its transaction; the restore steps the archive helper calls
// (restoreLinks, relinkArchived) bring back those whose other end is live
// and keep the rest, as boltstore's do.
func TestArchivedLinksMoveBack(t *testing.T) {
	ctx := storagetest.Operator()
	s := open(t, storage.Options{})
	ids := map[string]string{}
	for _, title := range []string{"a", "b", "c", "d"} {
		ids[title] = storeOK(t, s, title)
	}
	for _, l := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "a"}, {"d", "b"}} {
		if _, err := records.New(s).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: ids[l[0]], TargetId: ids[l[1]]}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(table, id string) (n int) {
		t.Helper()
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE $1 = '' OR source_id = $1 OR target_id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, title := range []string{"b", "c"} {
		if _, err := records.New(s).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{ids[title]}, Archive: true}); err != nil {
			t.Fatal(err)
		}
	}
	if live, arch := count(liveLinks, ""), count(archivedLinks, ""); live != 0 || arch != 4 {
		t.Fatalf("after archiving b and c: %d live, %d archived links; want 0, 4", live, arch)
	}
	// GetLinks with include_archived reads both places.
	resp, err := records.New(s).GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{ids["b"]}, IncludeArchived: true, IncludeNodes: true})
	if err != nil || len(resp.Links) != 3 || len(resp.Nodes) != 3 {
		t.Fatalf("archived b's links = %v, %v", resp, err)
	}
	// Restore b as the archive helper will: its record back, then its links.
	unarchive := func(w *writeTx, title string) {
		t.Helper()
		var raw []byte
		if err := w.tx.QueryRow(ctx, `DELETE FROM archived WHERE id = $1 RETURNING record`, ids[title]).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		m, err := decodeMemory(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.put(nil, m, "memory_restore"); err != nil {
			t.Fatal(err)
		}
	}
	var moved, kept uint32
	if err := s.write(ctx, func(w *writeTx) error {
		unarchive(w, "b")
		var err error
		moved, kept, err = w.restoreLinks(ids["b"])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// a→b and d→b are live again; b→c waits for c.
	if moved != 2 || kept != 1 || count(liveLinks, ids["b"]) != 2 || count(archivedLinks, ids["b"]) != 1 {
		t.Fatalf("restore b: moved %d, kept %d", moved, kept)
	}
	// c's archived links merged into d (a restore into the memory holding
	// its title): c→a becomes d→a, live; b→c becomes b→d, live.
	if err := s.write(ctx, func(w *writeTx) error {
		var err error
		moved, kept, err = w.relinkArchived(ids["c"], ids["d"])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if moved != 2 || kept != 0 || count(archivedLinks, "") != 0 || count(liveLinks, ids["d"]) != 3 {
		t.Fatalf("relink c onto d: moved %d, kept %d; %d archived left", moved, kept, count(archivedLinks, ""))
	}
	var n int
	if err := s.graphRead(ctx, func(q pgx.Tx) error {
		return q.QueryRow(ctx, `SELECT count(*) FROM links WHERE source_id = $1 AND target_id = $2`, ids["d"], ids["a"]).Scan(&n)
	}); err != nil || n != 1 {
		t.Fatalf("d→a = %d, %v", n, err)
	}
	// c's archive row remains, with no links: consistent.
	if err := s.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}
