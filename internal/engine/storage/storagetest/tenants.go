package storagetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// tenant is a caller confined to namespace ns, as an HTTP principal whose
// key grants only it.
func tenant(principal, ns string) context.Context {
	return caller.NewContext(context.Background(), caller.Caller{Principal: principal, Session: "s-" + principal, Family: "core", Scope: ns})
}

// testTenantSeesNothingOfAnother: a caller scoped to team-b learns
// nothing of team-a's memories through any read, count, candidate list,
// prefix, statistic, governance answer or write error, and changes none
// of them. The engine's services refuse the writes that name team-a
// before the backend (server.Authorize); this is the backend's own rule.
func testTenantSeesNothingOfAnother(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	a, b := tenant("team-a", "team-a"), tenant("team-b", "team-b")
	secret := storeAs(t, a, s, Mem("db password", "hunter2 zebra", InNS("team-a"), Tags("ops")))
	fading := storeAs(t, a, s, Mem("zebra fading", "short lived", InNS("team-a"), Tier("short")))
	gone := storeAs(t, a, s, Mem("zebra gone", "archived", InNS("team-a")))
	if _, err := s.DeleteMemories(a, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{gone.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateMemory(a, &aimemoryv1.UpdateMemoryRequest{Id: secret.Id, Content: proto.String("hunter3 zebra")}); err != nil {
		t.Fatal(err) // a superseded version in the archive
	}
	if _, err := s.RegisterEntity(a, &aimemoryv1.RegisterEntityRequest{CanonicalName: "Vault", Aliases: []string{"vlt"}, Namespace: "team-a"}); err != nil {
		t.Fatal(err)
	}
	own := storeAs(t, b, s, Mem("team-b zebra", "team-b's own", InNS("team-b")))
	// An operator links team-b's memory to team-a's.
	putLinkOK(t, s, own.Id, secret.Id, "related_to", "ops")
	std := storeAs(t, a, s, Mem("team-a rules", "write: approve", InNS("team-a")))
	if _, err := s.SetStandard(a, &aimemoryv1.SetStandardRequest{Namespace: "team-a", Id: std.Id, GovernanceJson: `{"write":"approve"}`}); err != nil {
		t.Fatal(err)
	}
	var pe *storage.PendingError
	if _, err := s.StoreMemory(a, &aimemoryv1.StoreMemoryRequest{Memory: Mem("queued zebra", "payload of team-a", InNS("team-a"))}); !errors.As(err, &pe) {
		t.Fatalf("team-a's queued store: %v", err)
	}
	clk.Add(7 * time.Hour) // fading has expired
	before := dump(t, s)

	// leaks fails t when answer shows anything of team-a's beyond what the
	// request itself sent (sent: echoed ids and words, e.g. not_found).
	leaks := func(what, answer string, sent ...string) {
		t.Helper()
		for _, x := range sent {
			answer = strings.ReplaceAll(answer, x, "")
		}
		for _, word := range []string{"team-a", "hunter", "password", secret.Id[:8], fading.Id[:8], gone.Id[:8], std.Id[:8], "Vault", "payload"} {
			if strings.Contains(answer, word) {
				t.Errorf("%s shows team-a's %q: %.300s", what, word, answer)
			}
		}
	}
	answer := func(m proto.Message, err error) string {
		if err != nil {
			return err.Error()
		}
		return prototext.Format(m)
	}
	ask := func(what string, m proto.Message, err error, sent ...string) {
		t.Helper()
		leaks(what, answer(m, err), sent...)
	}

	r1, err := s.ListMemories(b, &aimemoryv1.ListMemoriesRequest{Limit: 100, WithRecent: true})
	ask("list", r1, err)
	r2, err := s.ListMemories(b, &aimemoryv1.ListMemoriesRequest{Filter: &aimemoryv1.Filter{Namespace: "team-a"}, Limit: 100})
	ask("list of team-a", r2, err)
	r3, err := s.SearchMemories(b, &aimemoryv1.SearchMemoriesRequest{Query: "password zebra", Match: aimemoryv1.MatchMode_MATCH_MODE_ANY, Rank: aimemoryv1.RankMode_RANK_MODE_RECALL, Limit: 100}, nil)
	ask("recall", r3, err)
	r4, err := s.GetMemories(b, &aimemoryv1.GetMemoriesRequest{Ids: []string{secret.Id, secret.Id[:8], own.Id}, AllowPrefix: true, IncludeLinks: true})
	ask("get", r4, err, secret.Id, secret.Id[:8])
	if len(r4.GetLinks()) != 0 {
		t.Errorf("get shows a link to team-a's memory: %v", r4.GetLinks())
	}
	r5, err := s.ShortIDs(b, &aimemoryv1.ShortIdsRequest{Ids: []string{secret.Id[:35] + "x"}, MinLength: 1})
	if err != nil || len(r5.GetPrefixes()) != 1 || len(r5.Prefixes[0]) > 12 {
		t.Errorf("short id of a probe next to team-a's id = %v, %v: its length tells the neighbour", r5, err)
	}
	r6, err := s.CountNamespaces(b, &aimemoryv1.CountNamespacesRequest{})
	ask("namespace counts", r6, err)
	r7, err := s.Stats(b)
	ask("stats", r7, err)
	if r7.GetTotal() != 1 {
		t.Errorf("stats count %d memories, want team-b's 1", r7.GetTotal())
	}
	r8, err := s.TermStats(b, &aimemoryv1.TermStatsRequest{Text: "password hunter3", Tags: true})
	ask("term stats", r8, err, "password", "hunter3")
	for _, ts := range r8.GetTerms() {
		if ts.GetDf() != 0 {
			t.Errorf("term %q counted in %d documents team-b cannot read", ts.GetTerm(), ts.GetDf())
		}
	}
	if r8.GetDocs() != 1 {
		t.Errorf("term stats count %d documents, want team-b's 1", r8.GetDocs())
	}
	r9, err := s.RelatedTerms(b, &aimemoryv1.RelatedTermsRequest{Query: "zebra"})
	ask("related terms", r9, err)
	r10, err := s.Forget(b, &aimemoryv1.ForgetRequest{Pattern: "zebra", DryRun: true})
	ask("forget candidates", r10, err)
	r11, err := s.CollectGarbage(b, &aimemoryv1.CollectGarbageRequest{DryRun: true})
	ask("gc candidates", r11, err)
	r12, err := s.ListArchived(b, &aimemoryv1.ListArchivedRequest{Limit: 100})
	ask("archive list", r12, err)
	r13, err := s.GetArchived(b, &aimemoryv1.GetArchivedRequest{Ids: []string{gone.Id, secret.Id}, IncludeVersions: true})
	ask("archived", r13, err, gone.Id, secret.Id)
	r14, err := s.ArchiveStats(b)
	ask("archive stats", r14, err)
	if r14.GetTotal() != 0 || r14.GetVersions() != 0 {
		t.Errorf("archive stats count team-a's rows: %v", r14)
	}
	r15, err := s.GetLinks(b, &aimemoryv1.GetLinksRequest{Ids: []string{own.Id, secret.Id}, IncludeNodes: true, IncludeArchived: true})
	ask("links", r15, err, secret.Id)
	r16, err := s.Traverse(b, &aimemoryv1.TraverseRequest{SourceId: own.Id, MaxDepth: 3})
	ask("traverse", r16, err)
	r17, err := s.LinkTimeline(b, &aimemoryv1.LinkTimelineRequest{SourceId: own.Id})
	ask("timeline", r17, err)
	r18, err := s.GetEntityByAlias(b, &aimemoryv1.GetEntityByAliasRequest{Alias: "vlt"})
	ask("entity", r18, err)
	r19, err := s.ListPending(b, &aimemoryv1.ListPendingRequest{Status: "all"})
	ask("pending", r19, err)
	r20, err := s.ListAgents(b, &aimemoryv1.ListAgentsRequest{})
	ask("agents", r20, err)

	// A decision on team-a's pending action is "not found", as a missing one.
	_, err = s.ApprovePending(b, &aimemoryv1.DecidePendingRequest{Id: pe.ID})
	leaks("approve", answer(nil, err), pe.ID)
	_, missing := s.ApprovePending(b, &aimemoryv1.DecidePendingRequest{Id: "00000000-0000-4000-8000-000000000000"})
	if !errors.Is(err, storage.ErrNotFound) || strings.Replace(err.Error(), pe.ID, "ID", 1) != strings.Replace(missing.Error(), "00000000-0000-4000-8000-000000000000", "ID", 1) {
		t.Errorf("approve team-a's action: %v (a missing one: %v)", err, missing)
	}
	if _, err := s.RejectPending(b, &aimemoryv1.DecidePendingRequest{Id: pe.ID}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("reject team-a's action: %v", err)
	}
	// Writes: a memory of team-a's is not found; naming team-a is refused.
	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: %v, want not found", what, err)
			return
		}
		leaks(what, err.Error(), secret.Id, gone.Id)
	}
	_, err = s.UpdateMemory(b, &aimemoryv1.UpdateMemoryRequest{Id: secret.Id, Content: proto.String("mine")})
	notFound("update", err)
	_, err = s.PutLink(b, &aimemoryv1.PutLinkRequest{SourceId: own.Id, TargetId: secret.Id})
	notFound("link", err)
	_, err = s.PromoteMemory(b, &aimemoryv1.PromoteMemoryRequest{Id: secret.Id})
	notFound("promote", err)
	_, err = s.RestoreMemory(b, &aimemoryv1.RestoreMemoryRequest{Id: gone.Id})
	notFound("restore", err)
	_, err = s.Consolidate(b, &aimemoryv1.ConsolidateRequest{Ids: []string{own.Id, secret.Id}, Title: "merged", Summary: "x", Namespace: "team-b"})
	notFound("consolidate", err)
	if d, err := s.DeleteMemories(b, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{secret.Id}}); err != nil || len(d.Deleted) != 0 {
		t.Errorf("delete: %v, %v", d, err)
	}
	if tm, err := s.TouchMemories(b, &aimemoryv1.TouchMemoriesRequest{Ids: []string{secret.Id}}); err != nil || len(tm.Memories) != 0 {
		t.Errorf("touch: %v, %v", tm, err)
	}
	if _, err := s.CollectGarbage(b, &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil {
		t.Error(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, storage.ErrDenied) || !strings.Contains(err.Error(), "outside the namespaces team-b may use (team-b)") {
			t.Errorf("%s: %v, want a refusal naming the scope", what, err)
			return
		}
		leaks(what, err.Error(), "'team-a'")
	}
	for _, policy := range []aimemoryv1.ConflictPolicy{aimemoryv1.ConflictPolicy_CONFLICT_POLICY_ERROR, aimemoryv1.ConflictPolicy_CONFLICT_POLICY_MERGE} {
		_, err = s.StoreMemory(b, &aimemoryv1.StoreMemoryRequest{Memory: Mem("db password", "x", InNS("team-a")), OnConflict: policy})
		refused("store over team-a's title", err)
	}
	_, err = s.RegisterEntity(b, &aimemoryv1.RegisterEntityRequest{CanonicalName: "Vault", Aliases: []string{"vlt"}, Namespace: "team-a"})
	refused("entity in team-a", err)
	_, err = s.UpdateMemory(b, &aimemoryv1.UpdateMemoryRequest{Id: own.Id, Namespace: proto.String("team-a"), Title: proto.String("db password")})
	refused("move onto team-a's title", err)
	_, err = s.SetStandard(b, &aimemoryv1.SetStandardRequest{Namespace: "team-a", Id: own.Id})
	refused("set team-a's standard", err)
	_, err = s.ClearStandard(b, &aimemoryv1.ClearStandardRequest{Namespace: "team-a"})
	refused("clear team-a's standard", err)
	_, err = s.SetStandard(b, &aimemoryv1.SetStandardRequest{Namespace: "team-b/new", Id: own.Id, Parent: proto.String("team-a")})
	refused("inherit team-a's policy", err)
	_, err = s.SetStandard(b, &aimemoryv1.SetStandardRequest{Namespace: "*", Id: own.Id})
	if !errors.Is(err, storage.ErrDenied) {
		t.Errorf("claim the global standard: %v", err)
	}

	if after := dump(t, s); after != before {
		t.Errorf("team-b's calls changed team-a's data:\n%s\n→\n%s", before, after)
	}
	check(t, s)

	// A caller whose scope is empty reads and writes nothing at all.
	none := tenant("nobody", "")
	if l, err := s.ListMemories(none, &aimemoryv1.ListMemoriesRequest{Limit: 100}); err != nil || len(l.Memories) != 0 {
		t.Errorf("an empty scope lists %v, %v", l.GetMemories(), err)
	}
	if c, err := s.CountNamespaces(none, &aimemoryv1.CountNamespacesRequest{}); err != nil || c.Total != 0 {
		t.Errorf("an empty scope counts %v, %v", c, err)
	}
	if _, err := s.StoreMemory(none, &aimemoryv1.StoreMemoryRequest{Memory: Mem("x", "y")}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("an empty scope stores: %v", err)
	}
}

// dump is every memory, archive row and pending action as an operator
// sees them: to compare before and after.
func dump(t *testing.T, s storage.Backend) string {
	t.Helper()
	ctx := Operator()
	l, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.ListArchived(ctx, &aimemoryv1.ListArchivedRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.ListPending(ctx, &aimemoryv1.ListPendingRequest{Status: "all"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range l.Memories {
		out = append(out, m.String())
	}
	for _, m := range a.Archived {
		out = append(out, m.String())
	}
	for _, m := range p.Pending {
		out = append(out, m.String())
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
