package pgstore

import (
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestGraphTransferFromBolt: a graph exported by boltstore (live links,
// links kept in the archive, entities) imports here record for record,
// a second import finds every record unchanged, bad records are refused
// writing nothing, and Export gives back boltstore's records in
// boltstore's order.
func TestGraphTransferFromBolt(t *testing.T) {
	ctx := storagetest.Operator()
	bolt, err := boltstore.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	var ids []string
	for _, title := range []string{"a", "b", "c", "d", "e"} {
		r, err := records.New(bolt).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "x", Confidence: 1}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Memory.Id)
	}
	for _, l := range [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 0}, {0, 4}} {
		if _, err := records.New(bolt).PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: ids[l[0]], TargetId: ids[l[1]]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := records.New(bolt).InvalidateLink(ctx, &aimemoryv1.InvalidateLinkRequest{SourceId: ids[0], TargetId: ids[1], Relation: "related_to"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Zeta", "Alpha"} {
		if _, err := records.New(bolt).RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: name, Namespace: "people", Aliases: []string{name + "1", "x" + name}}); err != nil {
			t.Fatal(err)
		}
	}
	// c archived: b→c and c→d are kept in the archive.
	if _, err := records.New(bolt).DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{ids[2]}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	var graph []*aimemoryv1.ExportRecord
	pg := open(t, storage.Options{})
	err = pg.write(ctx, func(w *writeTx) error {
		graph = graph[:0]
		return records.New(bolt).Export(ctx, func(r *aimemoryv1.ExportRecord) error {
			switch x := r.GetRecord().(type) {
			case *aimemoryv1.ExportRecord_Memory:
				return w.put(nil, x.Memory, "memory_import")
			case *aimemoryv1.ExportRecord_Archived:
				raw, err := encodeMemory(x.Archived.Memory)
				if err != nil {
					return err
				}
				_, err = w.tx.Exec(ctx, `INSERT INTO archived (id, archived_at, reason, original_tier, original_expires_at, record) VALUES ($1, $2, $3, $4, $5, $6)`,
					x.Archived.Memory.Id, x.Archived.ArchivedAt, x.Archived.Reason, x.Archived.OriginalTier, x.Archived.OriginalExpiresAt, raw)
				return err
			case *aimemoryv1.ExportRecord_Link, *aimemoryv1.ExportRecord_ArchivedLink, *aimemoryv1.ExportRecord_Entity:
				graph = append(graph, r)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(graph) != 4+2+2 {
		t.Fatalf("bolt exported %d graph records, want 8", len(graph))
	}
	importAll := func(recs []*aimemoryv1.ExportRecord) []string {
		t.Helper()
		return importOutcomes(t, pg, recs)
	}
	all := func(want string) []string { return slices.Repeat([]string{want}, len(graph)) }
	if got := importAll(graph); !slices.Equal(got, all("created")) {
		t.Fatalf("first import = %q", got)
	}
	if got := importAll(graph); !slices.Equal(got, all("unchanged")) {
		t.Fatalf("second import = %q", got)
	}
	// Refused, writing nothing: a link to a memory not here, another
	// validity of a link here, an archived link with two live ends, an
	// entity whose alias another holds.
	changed := proto.Clone(graph[0].GetLink()).(*aimemoryv1.Link)
	changed.ValidUntil++
	rival := proto.Clone(graph[len(graph)-1].GetEntity()).(*aimemoryv1.EntityAliases)
	rival.Id = graph[len(graph)-2].GetEntity().Id // Alpha claiming Zeta's aliases
	bad := []*aimemoryv1.ExportRecord{
		{Record: &aimemoryv1.ExportRecord_Link{Link: &aimemoryv1.Link{SourceId: ids[0], TargetId: "nowhere", Relation: "related_to"}}},
		{Record: &aimemoryv1.ExportRecord_Link{Link: changed}},
		{Record: &aimemoryv1.ExportRecord_ArchivedLink{ArchivedLink: &aimemoryv1.Link{SourceId: ids[1], TargetId: ids[3], Relation: "related_to"}}},
		{Record: &aimemoryv1.ExportRecord_Entity{Entity: rival}},
	}
	for i, got := range importAll(bad) {
		if len(got) < 8 || got[:8] != "refused:" {
			t.Errorf("bad record %d = %q", i, got)
		}
	}
	back := exportedKinds(t, pg, ops.KindLink, ops.KindArchivedLink, ops.KindEntity)
	text := func(rs []*aimemoryv1.ExportRecord) (out []string) {
		for _, r := range rs {
			out = append(out, prototext.Format(r))
		}
		return out
	}
	if got, want := text(back), text(graph); !slices.Equal(got, want) {
		t.Errorf("Export's graph =\n%q\nboltstore exported\n%q", got, want)
	}
	if err := pg.CheckConsistency(ctx); err != nil {
		t.Error(err)
	}
}
