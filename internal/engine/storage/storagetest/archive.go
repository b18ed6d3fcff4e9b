package storagetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The archive operation and the lifecycle writes built on it: gc,
// forget, delete with archive, superseded versions, promote and restore.

func link(t testing.TB, s storage.Backend, src, dst string) {
	t.Helper()
	if _, err := s.PutLink(Operator(), &aimemoryv1.PutLinkRequest{SourceId: src, TargetId: dst, Relation: "related_to"}); err != nil {
		t.Fatal(err)
	}
}

// linkPairs lists links as "source→target" by title, sorted.
func linkPairs(ls []*aimemoryv1.Link, title map[string]string) []string {
	var out []string
	for _, l := range ls {
		out = append(out, title[l.SourceId]+"→"+title[l.TargetId])
	}
	slices.Sort(out)
	return out
}

func links(t testing.TB, s storage.Backend, archived bool, ids ...string) *aimemoryv1.GetLinksResponse {
	t.Helper()
	resp, err := s.GetLinks(Operator(), &aimemoryv1.GetLinksRequest{Ids: ids, IncludeArchived: archived, IncludeNodes: true})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func archivedRow(t testing.TB, s storage.Backend, id string) *aimemoryv1.GetArchivedResponse {
	t.Helper()
	resp, err := s.GetArchived(Operator(), &aimemoryv1.GetArchivedRequest{Ids: []string{id}, IncludeVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// testArchiveKeepsMetadataAndLinks: a removal through the archive keeps
// the whole record and its links; live traversals stop stepping into it;
// include_archived steps in; restore revives the links whose other end is
// live, and the rest follow when their other end comes back.
func testArchiveKeepsMetadataAndLinks(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	a := Store(t, s, Mem("Alpha", "first", meta(`{"agent_id":"ann","scope":"team","note":{"k":1}}`), Tier("short")))
	b := Store(t, s, Mem("Beta", "second"))
	c := Store(t, s, Mem("Gamma", "third"))
	title := map[string]string{a.Id: "Alpha", b.Id: "Beta", c.Id: "Gamma"}
	link(t, s, a.Id, b.Id)
	link(t, s, c.Id, a.Id)
	link(t, s, b.Id, c.Id)

	clk.Add(7 * time.Hour) // Alpha (short) expires
	gc, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(gc.Memories) != 1 || gc.Memories[0].Id != a.Id || gc.Memories[0].Title != "Alpha" || gc.Memories[0].Namespace != "global" {
		t.Fatalf("gc reported %v", gc.Memories)
	}
	row := archivedRow(t, s, a.Id)
	if len(row.Archived) != 1 {
		t.Fatalf("archive of Alpha: %v", row)
	}
	if got := string(row.Archived[0].Memory.MetadataJson); !strings.Contains(got, `"note":{"k":1}`) || !strings.Contains(got, `"scope":"team"`) {
		t.Errorf("archived metadata = %s", got)
	}
	if row.Archived[0].Reason != storage.ArchiveReasonTTL || row.Archived[0].OriginalTier != "short" || row.Archived[0].OriginalExpiresAt != a.ExpiresAt {
		t.Errorf("archive row = %v", row.Archived[0])
	}
	if got := linkPairs(row.Links, title); !slices.Equal(got, []string{"Alpha→Beta", "Gamma→Alpha"}) {
		t.Errorf("links kept in the archive = %v", got)
	}
	// Live reads do not step into the archived memory.
	live := links(t, s, false, b.Id, c.Id)
	if got := linkPairs(live.Links, title); !slices.Equal(got, []string{"Beta→Gamma"}) {
		t.Errorf("live links of Beta, Gamma = %v, want only Beta→Gamma", got)
	}
	if got := links(t, s, false, a.Id); !slices.Equal(got.NotFound, []string{a.Id}) {
		t.Errorf("live GetLinks of the archived id: not_found %v", got.NotFound)
	}
	// Asked to, they do.
	all := links(t, s, true, b.Id)
	if got := linkPairs(all.Links, title); !slices.Equal(got, []string{"Alpha→Beta", "Beta→Gamma"}) {
		t.Errorf("GetLinks(Beta, include_archived) = %v", got)
	}
	if !slices.ContainsFunc(all.Nodes, func(n *aimemoryv1.NodeSummary) bool { return n.Id == a.Id && n.Title == "Alpha" }) {
		t.Errorf("nodes with include_archived = %v, want Alpha's summary", all.Nodes)
	}
	if got := links(t, s, true, a.Id); len(got.NotFound) != 0 || len(got.Links) != 2 {
		t.Errorf("GetLinks(Alpha, include_archived) = %v", got)
	}
	check(t, s)

	// Beta goes too (delete with archive); restore Alpha: Gamma→Alpha comes
	// back, Alpha→Beta stays in the archive until Beta is back.
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{b.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	if r := archivedRow(t, s, b.Id); len(r.Archived) != 1 || r.Archived[0].Reason != storage.ArchiveReasonDelete {
		t.Fatalf("delete with archive: %v", r)
	}
	check(t, s)
	res, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: a.Id})
	if err != nil {
		t.Fatal(err)
	}
	if res.LinksRestored != 1 || res.LinksKept != 1 {
		t.Errorf("restore Alpha: restored %d kept %d links, want 1 and 1", res.LinksRestored, res.LinksKept)
	}
	// A fresh expiry for its tier, its metadata back.
	if res.Memory.ExpiresAt != clk.Now().UnixNano()+int64(6*time.Hour) {
		t.Errorf("restored expiry %d, want now+6h", res.Memory.ExpiresAt)
	}
	if got := get(t, s, a.Id); got == nil || !strings.Contains(string(got.MetadataJson), `"note"`) {
		t.Errorf("restored Alpha = %v", got)
	}
	if got := linkPairs(links(t, s, false, a.Id).Links, title); !slices.Equal(got, []string{"Gamma→Alpha"}) {
		t.Errorf("live links after restoring Alpha = %v", got)
	}
	if _, err := s.Archived(ctx, a.Id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("archive row of a restored memory: %v", err)
	}
	if _, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: b.Id}); err != nil {
		t.Fatal(err)
	}
	if got := linkPairs(links(t, s, false, a.Id, b.Id).Links, title); !slices.Equal(got, []string{"Alpha→Beta", "Beta→Gamma", "Gamma→Alpha"}) {
		t.Errorf("live links after restoring Beta = %v", got)
	}
	check(t, s)

	// A hard delete takes its links with it, archived ones included.
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{b.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.Id}}); err != nil {
		t.Fatal(err)
	}
	if r := archivedRow(t, s, b.Id); len(r.Links) != 1 {
		t.Errorf("Beta's archived links after Alpha's hard delete = %v, want Beta→Gamma only", linkPairs(r.Links, title))
	}
	if _, err := s.Archived(ctx, a.Id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a hard delete wrote an archive row: %v", err)
	}
	check(t, s)
}

// testRestoreRefusals: restore names what stops it and changes nothing.
func testRestoreRefusals(t *testing.T, o Opener) {
	ctx := Operator()
	p := &recordingPolicy{}
	s, _ := o.open(t, storage.Options{Policy: p})
	a := Store(t, s, Mem("Old", "x"))
	if _, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: a.Id}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("restore of a live, never archived id: %v", err)
	}
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	taker := Store(t, s, Mem("Old", "took the title"))
	_, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: a.Id})
	if !errors.Is(err, storage.ErrConflict) || !strings.Contains(err.Error(), taker.Id) {
		t.Errorf("restore onto a taken title: %v", err)
	}
	if _, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: ""}); err == nil {
		t.Error("restore of an empty id succeeded")
	}
	if _, err := s.Archived(ctx, a.Id); err != nil {
		t.Errorf("a refused restore lost the archive row: %v", err)
	}
	// The policy is asked, as a store into the namespace.
	locked := Store(t, s, Mem("L", "x", InNS("lock")))
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{locked.Id}, Archive: true}); err != nil {
		t.Fatal(err)
	}
	p.take()
	if _, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: locked.Id}); err != nil {
		t.Fatal(err)
	}
	if got := p.take(); !slices.Equal(got, []string{"operator store -→lock"}) {
		t.Errorf("restore asked the policy %v", got)
	}
	check(t, s)
}

// testForget: every criterion narrows; the pattern needs all its words;
// an unknown tier and an empty request are errors; a dry run writes
// nothing; a refusal of one memory archives none.
func testForget(t *testing.T, o Opener) {
	ctx := Operator()
	p := &recordingPolicy{}
	s, clk := o.open(t, storage.Options{Policy: noDeleteIn{"keep", p}})
	both := Store(t, s, Mem("Draft notes", "meeting", InNS("f")))
	Store(t, s, Mem("Draft only", "meeting", InNS("f")))
	Store(t, s, Mem("Notes only", "meeting", InNS("f")))
	tagged := Store(t, s, Mem("Tagged", "drafting the notes", InNS("f"), Tier("long"), Tags("x")))
	other := Store(t, s, Mem("Draft notes", "other namespace", InNS("g"), Tier("short")))
	clk.Add(7 * time.Hour) // other (short) has expired: still forgettable

	for _, tc := range []struct {
		req  *aimemoryv1.ForgetRequest
		want string // the field the error names
	}{
		{&aimemoryv1.ForgetRequest{}, "at least one of namespace, pattern or tier"},
		{&aimemoryv1.ForgetRequest{Tier: "all"}, "tier"},
		{&aimemoryv1.ForgetRequest{Namespace: "f", Tier: "forever"}, "tier"},
		{&aimemoryv1.ForgetRequest{Pattern: " ... "}, "pattern: has no word"},
		{&aimemoryv1.ForgetRequest{Pattern: strings.Repeat("w ", 5000)}, "pattern: must be at most"},
		{&aimemoryv1.ForgetRequest{Namespace: "a//b"}, "namespace"},
	} {
		_, err := s.Forget(ctx, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Forget(%v) = %v, want an error about %q", tc.req, err, tc.want)
		}
	}

	dry, err := s.Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft notes", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(r *aimemoryv1.ForgetResponse) []string {
		var out []string
		for _, m := range r.Memories {
			out = append(out, m.Id)
		}
		slices.Sort(out) // oldest first: these were all stored at one instant
		return out
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	// Stemming: "drafting" matches "draft"; "Draft only" and "Notes only" do not.
	if want := sorted(both.Id, tagged.Id, other.Id); dry.Matched != 3 || !slices.Equal(ids(dry), want) {
		t.Fatalf("dry run matched %d %v, want %v", dry.Matched, ids(dry), want)
	}
	if st := stats(t, s); st.Total != 5 || st.Archived != 0 {
		t.Fatalf("a dry run wrote: total %d archived %d", st.Total, st.Archived)
	}
	if got, _ := s.Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft notes", Namespace: "f", Tier: "long", DryRun: true}); got.Matched != 1 || got.Memories[0].Id != tagged.Id {
		t.Errorf("pattern+namespace+tier matched %v", got)
	}

	// One refusal (a delete in namespace "keep") archives nothing at all.
	Store(t, s, Mem("Draft notes", "kept one", InNS("keep")))
	p.take()
	if _, err := s.Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft notes"}); !errors.Is(err, storage.ErrDenied) {
		t.Fatalf("forget touching a locked namespace: %v", err)
	}
	if st := stats(t, s); st.Archived != 0 {
		t.Fatalf("a refused forget archived %d", st.Archived)
	}
	if got := p.take(); len(got) == 0 || !strings.Contains(got[0], "delete") {
		t.Errorf("forget asked the policy %v, want delete questions", got)
	}

	got, err := s.Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft notes", Namespace: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Matched != 2 || !slices.Equal(ids(got), sorted(both.Id, tagged.Id)) {
		t.Errorf("forget matched %v", ids(got))
	}
	for _, id := range []string{both.Id, tagged.Id} {
		if a, err := s.Archived(ctx, id); err != nil || a.Reason != storage.ArchiveReasonForget || a.Memory.Content == "" {
			t.Errorf("archive row of %s: %v %v", id, a, err)
		}
	}
	if get(t, s, other.Id) == nil {
		t.Error("forget in namespace f removed a memory of g")
	}
	check(t, s)
}

// testForgetSkipsGuarded: without a namespace, forget never reaches into
// guarded namespaces (an inbox is not everyone's to forget).
func testForgetSkipsGuarded(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	inbox := authz.InboxPrefix + "bob"
	if _, err := s.StoreMemory(authz.AsOwner(ctx, authz.GuardMessages), &aimemoryv1.StoreMemoryRequest{Memory: Mem("draft", "for bob", InNS(inbox))}); err != nil {
		t.Fatal(err)
	}
	Store(t, s, Mem("draft", "mine"))
	got, err := s.Forget(ctx, &aimemoryv1.ForgetRequest{Pattern: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Matched != 1 || got.Memories[0].Namespace != "global" {
		t.Errorf("forget matched %v, want only the global memory", got.Memories)
	}
}

// testSupersededVersions: update and a merging store keep the version
// they replace; update can clear an expiry; raising to long clears it on
// every path.
func testSupersededVersions(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	m := Store(t, s, Mem("Doc", "v1", meta(`{"k":"one"}`)))
	clk.Add(time.Second)
	up, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, Content: proto.String("v2"), ClearExpiresAt: true})
	if err != nil {
		t.Fatal(err)
	}
	if up.Memory.ExpiresAt != 0 || up.Memory.Tier != "mid" {
		t.Errorf("update clearing the expiry: tier %s expiry %d", up.Memory.Tier, up.Memory.ExpiresAt)
	}
	clk.Add(time.Second)
	Store(t, s, Mem("Doc", "v3", Tier("long"))) // merges, raising to long
	row := archivedRow(t, s, m.Id)
	if len(row.Archived) != 0 || len(row.Versions) != 2 {
		t.Fatalf("archive of Doc: %d removed, %d versions, want 0 and 2", len(row.Archived), len(row.Versions))
	}
	v1, v2 := row.Versions[0], row.Versions[1]
	if v1.Memory.Content != "v1" || v2.Memory.Content != "v2" || v1.Reason != storage.ArchiveReasonSuperseded ||
		string(v1.Memory.MetadataJson) != `{"k":"one"}` || v1.OriginalExpiresAt != m.ExpiresAt {
		t.Errorf("versions = %v, %v", v1, v2)
	}
	if cur := get(t, s, m.Id); cur.Content != "v3" || cur.Tier != "long" || cur.ExpiresAt != 0 {
		t.Errorf("after the merge: %v", cur)
	}
	// Raising to long by update, from an expiring mid memory.
	n := Store(t, s, Mem("Other", "x"))
	if up, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: n.Id, Tier: proto.String("long")}); err != nil || up.Memory.ExpiresAt != 0 {
		t.Errorf("update to long: %v, %v", up, err)
	}
	// An unknown tier is an error and changes nothing.
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: n.Id, Tier: proto.String("forever")}); err == nil {
		t.Error("update to an unknown tier succeeded")
	}
	if r := archivedRow(t, s, n.Id); len(r.Versions) != 1 {
		t.Errorf("a refused update kept a version: %d versions", len(r.Versions))
	}
	if st := stats(t, s); st.Archived != 0 {
		t.Errorf("superseded versions counted as archived memories: %d", st.Archived)
	}
	check(t, s)
}

// testPromote: tier mode makes a memory long with no expiry; vertical
// mode copies into a proper ancestor (merging into a memory holding the
// title) with a derived_from link; the policy is asked about the source
// and about the ancestor.
func testPromote(t *testing.T, o Opener) {
	ctx := Operator()
	p := &recordingPolicy{}
	s, _ := o.open(t, storage.Options{Policy: p})
	m := Store(t, s, Mem("Fact", "x", InNS("org/team/me"), Tier("short"), meta(`{"agent_id":"ann"}`)))
	p.take()
	r, err := s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: m.Id})
	if err != nil {
		t.Fatal(err)
	}
	if r.Memory.Tier != "long" || r.Memory.ExpiresAt != 0 || get(t, s, m.Id).ExpiresAt != 0 {
		t.Errorf("tier promotion: %v", r.Memory)
	}
	if got := p.take(); !slices.Equal(got, []string{"operator promote org/team/me→org/team/me"}) {
		t.Errorf("tier promotion asked %v", got)
	}

	for _, tc := range []struct{ to, want string }{
		{"org/team/me", "to_namespace: must be a proper ancestor"},
		{"org/other", "to_namespace: \"org/other\" is not an ancestor of \"org/team/me\" (its ancestors: org/team, org)"},
		{"a//b", "to_namespace"},
	} {
		if _, err := s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: m.Id, ToNamespace: tc.to}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("promote to %q: %v, want %q", tc.to, err, tc.want)
		}
	}
	if _, err := s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: "nope"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("promote of a missing id: %v", err)
	}

	p.take()
	r, err = s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: m.Id, ToNamespace: "org"})
	if err != nil {
		t.Fatal(err)
	}
	cp := r.Memory
	if r.Merged || cp.Id == m.Id || cp.Namespace != "org" || cp.Title != "Fact" || string(cp.MetadataJson) != `{"agent_id":"ann"}` || cp.Tier != "long" {
		t.Errorf("vertical copy = %v", cp)
	}
	if got := p.take(); !slices.Equal(got, []string{"operator promote org/team/me→org/team/me", "operator promote org/team/me→org"}) {
		t.Errorf("vertical promotion asked %v", got)
	}
	ls := links(t, s, false, cp.Id).Links
	if len(ls) != 1 || ls[0].SourceId != cp.Id || ls[0].TargetId != m.Id || ls[0].Relation != "derived_from" {
		t.Errorf("links of the copy = %v", ls)
	}
	// Again: merges into the copy, one link still.
	r, err = s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: m.Id, ToNamespace: "org"})
	if err != nil || !r.Merged || r.Memory.Id != cp.Id {
		t.Fatalf("second vertical promotion: %v, %v", r, err)
	}
	if ls := links(t, s, false, cp.Id).Links; len(ls) != 1 {
		t.Errorf("links after a second promotion = %v", ls)
	}

	// The ancestor's policy decides too: nothing is written when it denies.
	d := Store(t, s, Mem("Deep", "x", InNS("locked/sub")))
	before := stats(t, s).Total
	if _, err := s.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: d.Id, ToNamespace: "locked"}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("promotion into a locked ancestor: %v", err)
	}
	if got := stats(t, s).Total; got != before {
		t.Errorf("a refused promotion wrote: %d memories, want %d", got, before)
	}
	check(t, s)
}

// noDeleteIn denies deletes in one namespace and asks next about the rest.
type noDeleteIn struct {
	ns   string
	next storage.WritePolicy
}

func (p noDeleteIn) CheckWrite(ctx context.Context, w storage.Write) storage.Verdict {
	if v := p.next.CheckWrite(ctx, w); v.Decision != storage.Allow {
		return v
	}
	if w.Op == storage.OpDelete && w.Old.GetNamespace() == p.ns {
		return storage.Verdict{Decision: storage.Deny, Reason: "delete denied by governance: namespace " + p.ns + " keeps its memories"}
	}
	return storage.Verdict{}
}

// testRestoreLongHasNoExpiry: a long memory collected for an expiry it
// was given comes back with none (a fresh expiry for its tier), and keeps
// its original expiry in the archive row until then.
func testRestoreLongHasNoExpiry(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	m := Store(t, s, Mem("Keeper", "x", Tier("long")))
	at := clk.Now().Add(time.Minute).UnixNano()
	if _, err := s.UpdateMemory(ctx, &aimemoryv1.UpdateMemoryRequest{Id: m.Id, ExpiresAt: proto.Int64(at)}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if gc, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil || len(gc.Collected) != 1 {
		t.Fatalf("gc = %v, %v", gc, err)
	}
	if a, err := s.Archived(ctx, m.Id); err != nil || a.OriginalExpiresAt != at || a.OriginalTier != "long" {
		t.Fatalf("archive row = %v, %v", a, err)
	}
	r, err := s.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: m.Id})
	if err != nil || r.Memory.ExpiresAt != 0 || r.Memory.Tier != "long" {
		t.Fatalf("restore = %v, %v", r, err)
	}
	if exp, _ := s.HasExpired(ctx); exp {
		t.Error("the restored long memory counts as expired")
	}
	check(t, s)
}
