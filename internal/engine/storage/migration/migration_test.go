package migration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// chain is the tests' data dir audit key: source and target are opened
// with it, as migrate opens them with the data dir's.
var chain = audit.Ephemeral()

// everyKind is a bbolt store holding records of every kind: memories, an
// archived one, a superseded version, a link and an archived link, an
// entity, a standard, a queued action and a webhook subscription.
func everyKind(t *testing.T) *records.Store {
	t.Helper()
	clock := storagetest.NewClock()
	bolt, err := boltstore.Open(storagetest.Operator(), filepath.Join(t.TempDir(), "memory.db"), storage.Options{Now: clock.Now, Audit: chain})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	src := records.New(bolt)
	owner := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Session: "s1", Family: "core", Scope: caller.AllNamespaces})
	bob := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:bob", Session: "s2", Family: "core", Scope: caller.AllNamespaces})
	graph := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:owner", Family: "graph", Scope: caller.AllNamespaces})
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var ms []*aimemoryv1.Memory
	for _, w := range strings.Fields("alpha beta gamma delta epsilon zeta eta theta") {
		ms = append(ms, storagetest.Store(t, src, storagetest.Mem(w, "about "+w, storagetest.Tags(w))))
	}
	clock.Add(time.Second)
	must(src.UpdateMemory(owner, &aimemoryv1.UpdateMemoryRequest{Id: ms[0].Id, Content: proto.String("about alpha, edited")}))
	for _, to := range []*aimemoryv1.Memory{ms[1], ms[2]} {
		must(src.PutLink(graph, &aimemoryv1.PutLinkRequest{SourceId: ms[0].Id, TargetId: to.Id, Relation: "related_to"}))
	}
	must(src.DeleteMemories(owner, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{ms[2].Id}, Archive: true}))
	must(src.RegisterEntity(graph, &aimemoryv1.RegisterEntityRequest{CanonicalName: "Acme", Namespace: "global", Aliases: []string{"acme corp"}}))
	std, err := src.StoreMemory(owner, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("rules", "team rules", storagetest.InNS("team"))})
	must(std, err)
	must(src.SetStandard(owner, &aimemoryv1.SetStandardRequest{Namespace: "team", Id: std.Memory.Id, GovernanceJson: `{"write":"approve"}`}))
	if _, err := src.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: storagetest.Mem("bob's", "queued", storagetest.InNS("team"))}); err == nil {
		t.Fatal("bob's store into team was not queued")
	}
	must(nil, src.PutSubscription(storagetest.Operator(), &storage.Subscription{ID: "0b6f1c2e-0000-4000-8000-00000000000a",
		URL: "https://hooks.example/x", Events: []string{"memory_store"}, SealedSecret: []byte("sealed"), CreatedBy: "ai:alice", CreatedAt: 5}))
	for _, agent := range []string{"ai:owner", "ai:bob", "ai:mallory"} {
		must(src.AppendAudit(storagetest.Operator(), &aimemoryv1.AuditRecord{AgentId: agent, Event: "access_denied", Family: "core", Reason: "scope", Suppressed: 2}))
	}
	sum, err := Summarize(storagetest.Operator(), src)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		if sum[k].Count == 0 {
			t.Fatalf("the source has no %s record", k)
		}
	}
	return src
}

// TestCopyInterruptedResumedVerified: a copy cancelled after its first
// batch is continued by running it again, which creates the rest and
// finds the first batch's records unchanged: no record twice, and every
// kind the same in both stores by count and checksum. A third run changes
// nothing.
func TestCopyInterruptedResumedVerified(t *testing.T) {
	src := everyKind(t)
	dst, err := pgstore.Open(storagetest.Operator(), pgtest.DSN(t), storage.Options{Audit: chain})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()

	ctx, cancel := context.WithCancel(storagetest.Operator())
	var total int64
	copied := 0
	_, err = Copy(ctx, src, records.New(dst), Options{Batch: 3, Started: func(n int64) { total = n }, Progress: func(n int) { copied += n; cancel() }})
	if !errors.Is(err, context.Canceled) || copied != 3 {
		t.Fatalf("interrupted run: %v after %d records", err, copied)
	}

	copied = 0
	rep, err := Copy(storagetest.Operator(), src, records.New(dst), Options{Batch: 3, Progress: func(n int) { copied += n }})
	if err != nil {
		t.Fatal(err)
	}
	if int64(copied) != total {
		t.Errorf("resumed run went through %d records of %d", copied, total)
	}
	created, unchanged := 0, 0
	for _, k := range rep.Kinds {
		t.Logf("%-13s source %d target %d: %d created, %d unchanged, %d refused; same %v", k.Kind, k.Source, k.Target, k.Created, k.Unchanged, k.Refused, k.Same())
		created += k.Created
		unchanged += k.Unchanged
		if !k.Same() || k.Refused > 0 || k.Created+k.Unchanged != k.Source {
			t.Errorf("%s: not copied exactly: %+v", k.Kind, k)
		}
	}
	if unchanged < 3 || created == 0 {
		t.Errorf("resumed run: %d created, %d unchanged; want the interrupted run's 3 records unchanged", created, unchanged)
	}
	if !rep.Verified() {
		t.Errorf("not verified: %v", rep.Refusals)
	}
	if a := rep.Kinds[len(rep.Kinds)-1]; a.Kind != AuditKind || a.Source != 3 || a.Target != 3 {
		t.Errorf("audit log: %+v", a)
	}
	if v := rep.TargetChain; !v.GetOk() || v.GetCount() != 3 || v.GetHeadHash() != rep.SourceChain.GetHeadHash() || !v.GetCheckedHeadRow() {
		t.Errorf("target chain %v, source %v", v, rep.SourceChain)
	}
	for _, r := range rep.Refusals {
		t.Errorf("refused: %s", r)
	}

	again, err := Copy(storagetest.Operator(), src, records.New(dst), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range again.Kinds {
		if k.Created != 0 || k.Unchanged != k.Source {
			t.Errorf("third run changed %s: %+v", k.Kind, k)
		}
	}
	if err := dst.CheckConsistency(storagetest.Operator()); err != nil {
		t.Error(err)
	}
	// Read back through the API, not only the export: the archive and its versions.
	var archivedID string
	src.Export(storagetest.Operator(), func(r *aimemoryv1.ExportRecord) error {
		if a := r.GetArchived(); a != nil {
			archivedID = a.GetMemory().GetId()
		}
		return nil
	})
	want, err1 := src.GetArchived(storagetest.Operator(), &aimemoryv1.GetArchivedRequest{Ids: []string{archivedID}})
	got, err2 := records.New(dst).GetArchived(storagetest.Operator(), &aimemoryv1.GetArchivedRequest{Ids: []string{archivedID}})
	if err1 != nil || err2 != nil || len(got.GetArchived()) != 1 || !proto.Equal(want.GetArchived()[0], got.GetArchived()[0]) {
		t.Errorf("archived read back: %v %v, want %v %v", got, err2, want, err1)
	}
}

// TestSummarizeSeesOneField: the checksum of a kind changes with any field
// of one record, and not with the order records come in.
func TestSummarizeSeesOneField(t *testing.T) {
	recs := []*aimemoryv1.ExportRecord{
		{Record: &aimemoryv1.ExportRecord_Memory{Memory: &aimemoryv1.Memory{Id: "a", Title: "x", AccessCount: 1}}},
		{Record: &aimemoryv1.ExportRecord_Memory{Memory: &aimemoryv1.Memory{Id: "b", Title: "y"}}},
	}
	sum := func(rs ...*aimemoryv1.ExportRecord) string {
		s, err := Summarize(storagetest.Operator(), fixed(rs))
		if err != nil {
			t.Fatal(err)
		}
		return s["memory"].Sum
	}
	base := sum(recs...)
	if sum(recs[1], recs[0]) != base {
		t.Error("order changed the checksum")
	}
	changed := proto.Clone(recs[0]).(*aimemoryv1.ExportRecord)
	changed.GetMemory().AccessCount = 2
	if sum(changed, recs[1]) == base {
		t.Error("a changed access count kept the checksum")
	}
}

// fixed is a Transfer exporting a fixed list.
type fixed []*aimemoryv1.ExportRecord

func (f fixed) Export(_ context.Context, each func(*aimemoryv1.ExportRecord) error) error {
	for _, r := range f {
		if err := each(r); err != nil {
			return err
		}
	}
	return nil
}
func (fixed) Import(context.Context, []*aimemoryv1.ExportRecord) ([]*aimemoryv1.ImportResult, error) {
	return nil, errors.New("read only")
}

// TestCopyKeepsTheAuditLogOrSaysWhyNot: a target holding an audit log of
// its own refuses the source's records under the same seqs and the copy
// is not verified; a source cut below the data dir's pin fails on both
// sides, however faithful the copy.
func TestCopyKeepsTheAuditLogOrSaysWhyNot(t *testing.T) {
	ctx := context.Background()
	src := everyKind(t)
	dst, err := pgstore.Open(ctx, pgtest.DSN(t), storage.Options{Audit: chain})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := records.New(dst).AppendAudit(ctx, &aimemoryv1.AuditRecord{AgentId: "ai:elsewhere", Event: "call_denied"}); err != nil {
		t.Fatal(err)
	}
	rep, err := Copy(ctx, src, records.New(dst), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Kinds[len(rep.Kinds)-1]
	if rep.Verified() || a.Refused != 1 || a.Created != 2 || a.Same() || !strings.Contains(strings.Join(rep.Refusals, "\n"), "audit: audit record 1: the target holds another record") {
		t.Errorf("copy onto another audit log: verified %v, %+v, %v", rep.Verified(), a, rep.Refusals)
	}

	fresh, err := pgstore.Open(ctx, pgtest.DSN(t), storage.Options{Audit: chain})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	rep, err = Copy(ctx, src, records.New(fresh), Options{AuditPin: audit.Head{Seq: 4, Hash: "a record the source no longer holds"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verified() || rep.SourceChain.GetOk() || rep.TargetChain.GetOk() || rep.TargetChain.GetFirstBadSeq() != 4 {
		t.Errorf("copy of a log cut below its pin: verified %v, source %v, target %v", rep.Verified(), rep.SourceChain, rep.TargetChain)
	}
}
