package pgstore

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// exportedGovernance is s's governance records as Export sends them.
func exportedGovernance(t *testing.T, s *Store) []*aimemoryv1.ExportRecord {
	t.Helper()
	return exportedKinds(t, s, ops.KindStandard, ops.KindPending)
}

func importGov(t *testing.T, s *Store, recs []*aimemoryv1.ExportRecord) []string {
	t.Helper()
	return importOutcomes(t, s, recs)
}

// TestGovernanceTransfer: standards and pending actions, decided or not,
// export in key order and import into another database as they were; a
// second import finds them unchanged, other content is refused and not
// overwritten, and the imported policy and queue govern the new store.
func TestGovernanceTransfer(t *testing.T) {
	ctx := storagetest.Operator()
	a := open(t, storage.Options{})
	std, err := records.New(a).StoreMemory(govCaller("ai:alice"), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "gov rules", Content: "rules", Namespace: "gov", Confidence: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(a).SetStandard(govCaller("ai:alice"), &aimemoryv1.SetStandardRequest{Namespace: "gov", Id: std.Memory.Id, GovernanceJson: `{"write":"approve"}`}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, title := range []string{"kept pending", "rejected"} {
		_, err := records.New(a).StoreMemory(govCaller("ai:bob"), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "x", Namespace: "gov", Confidence: 1}})
		var pe *storage.PendingError
		if !errors.As(err, &pe) {
			t.Fatalf("store %q: %v, want queued", title, err)
		}
		ids = append(ids, pe.ID)
	}
	if _, err := records.New(a).RejectPending(govCaller("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: ids[1]}); err != nil {
		t.Fatal(err)
	}
	recs := exportedGovernance(t, a)
	if len(recs) != 3 || recs[0].GetStandard().GetNamespace() != "gov" || recs[1].GetPending() == nil || recs[1].GetPending().Id > recs[2].GetPending().GetId() {
		t.Fatalf("export = %v; want the standard, then both pending actions by id", recs)
	}

	b := open(t, storage.Options{})
	if got := importGov(t, b, recs); strings.Join(got, ",") != "created,created,created" {
		t.Fatalf("first import: %v", got)
	}
	if got := importGov(t, b, recs); strings.Join(got, ",") != "unchanged,unchanged,unchanged" {
		t.Fatalf("second import: %v", got)
	}
	changed := proto.Clone(recs[1]).(*aimemoryv1.ExportRecord)
	changed.GetPending().Reason = "other"
	otherStd := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	otherStd.GetStandard().Owner = "ai:mallory"
	guarded := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	guarded.GetStandard().Namespace = "_agents"
	expired := proto.Clone(recs[1]).(*aimemoryv1.ExportRecord)
	expired.GetPending().Id, expired.GetPending().Status = "fresh-id", "expired"
	got := importGov(t, b, []*aimemoryv1.ExportRecord{changed, otherStd, guarded, expired})
	for i, want := range []string{"exists with other content", "has another standard here", "guarded namespace", "is not pending, approved or rejected"} {
		if !strings.HasPrefix(got[i], "refused: ") || !strings.Contains(got[i], want) {
			t.Errorf("import %d = %q, want refused: ...%s", i, got[i], want)
		}
	}
	if x, y := formatGovRecords(recs), formatGovRecords(exportedGovernance(t, b)); x != y {
		t.Fatalf("the import changed what it holds:\n%s\n%s", x, y)
	}

	// The imported standard governs b (its memory need not be there) and
	// the imported pending action is decided by b's rules.
	if _, err := records.New(b).StoreMemory(govCaller("ai:bob"), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "new", Content: "x", Namespace: "gov", Confidence: 1}}); !errors.Is(err, storage.ErrPending) {
		t.Errorf("store under the imported policy: %v, want queued", err)
	}
	resp, err := records.New(b).ApprovePending(govCaller("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: ids[0]})
	if err != nil || !resp.Approved {
		t.Fatalf("approve the imported action: %v, %v", resp, err)
	}
	if m, err := records.New(b).GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{resp.Action.ResultMemoryId}}); err != nil || len(m.Memories) != 1 || m.Memories[0].Title != "kept pending" {
		t.Errorf("the approved import wrote %v, %v", m, err)
	}
	if _, err := records.New(b).ApprovePending(govCaller("ai:carol"), &aimemoryv1.DecidePendingRequest{Id: ids[1]}); !errors.Is(err, storage.ErrDecided) {
		t.Errorf("approve the imported rejected action: %v, want ErrDecided", err)
	}
}

func formatGovRecords(recs []*aimemoryv1.ExportRecord) string {
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(prototext.Format(r) + "\n")
	}
	return b.String()
}
