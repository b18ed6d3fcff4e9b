package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func putLinkOK(t *testing.T, s storage.Backend, src, dst, rel, by string) *aimemoryv1.PutLinkResponse {
	t.Helper()
	resp, err := s.PutLink(OperatorAs(by), &aimemoryv1.PutLinkRequest{SourceId: src, TargetId: dst, Relation: rel})
	if err != nil {
		t.Fatalf("put link %s→%s %s: %v", src, dst, rel, err)
	}
	return resp
}

// linkRows counts the stored links.
func linkRows(t *testing.T, s storage.Backend) uint64 {
	t.Helper()
	return stats(t, s).Links
}

func testPutLinkValidatesAndWritesNothingOnBadInput(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	a := Store(t, s, Mem("a", "x"))
	b := Store(t, s, Mem("b", "x"))
	for _, tc := range []struct {
		req  *aimemoryv1.PutLinkRequest
		want string
		nf   bool
	}{
		{&aimemoryv1.PutLinkRequest{SourceId: a.Id, TargetId: b.Id, Relation: "depends_on"}, "relation: must be one of related_to, supersedes, contradicts, derived_from", false},
		{&aimemoryv1.PutLinkRequest{SourceId: a.Id, TargetId: a.Id}, "target_id: must differ from source_id", false},
		{&aimemoryv1.PutLinkRequest{SourceId: "", TargetId: b.Id}, "source_id: must not be empty", false},
		{&aimemoryv1.PutLinkRequest{SourceId: "nope", TargetId: b.Id}, "source_id: memory not found: nope", true},
		{&aimemoryv1.PutLinkRequest{SourceId: a.Id, TargetId: "nope"}, "target_id: memory not found: nope", true},
	} {
		_, err := s.PutLink(ctx, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.req, err, tc.want)
		}
		var fe *record.FieldError
		if tc.nf != errors.Is(err, storage.ErrNotFound) || (!tc.nf && !errors.As(err, &fe)) {
			t.Errorf("%v: err %v has the wrong kind", tc.req, err)
		}
	}
	// Who observed it is the verified caller: one without a valid
	// principal links nothing.
	for _, by := range []string{"", "bad agent"} {
		req := &aimemoryv1.PutLinkRequest{SourceId: a.Id, TargetId: b.Id}
		var fe *record.FieldError
		if _, err := s.PutLink(OperatorAs(by), req); !errors.As(err, &fe) || fe.Field != "observed_by" {
			t.Errorf("caller %q: err %v, want an observed_by field error", by, err)
		}
	}
	if n := linkRows(t, s); n != 0 {
		t.Fatalf("bad input wrote %d links", n)
	}
}

func testLinkLifecycleCreateInvalidateRevive(t *testing.T, o Opener) {
	ctx, carol := Operator(), OperatorAs("ai:carol")
	s, clk := o.open(t, storage.Options{})
	a := Store(t, s, Mem("a", "x"))
	b := Store(t, s, Mem("b", "x"))

	t0 := clk.Now().UnixNano()
	r := putLinkOK(t, s, a.Id, b.Id, "", "ai:alice")
	if r.Outcome != aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_CREATED || r.Link.Relation != "related_to" ||
		r.Link.ValidFrom != t0 || r.Link.CreatedAt != t0 || r.Link.ObservedBy != "ai:alice" {
		t.Fatalf("create = %v", r)
	}
	clk.Add(time.Minute)
	if r := putLinkOK(t, s, a.Id, b.Id, "related_to", "ai:bob"); r.Outcome != aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_UNCHANGED || r.Link.ObservedBy != "ai:alice" || r.Link.ValidFrom != t0 {
		t.Fatalf("again = %v", r)
	}

	// Invalidate now; then again with an explicit instant (overwrites).
	clk.Add(time.Minute)
	t2 := clk.Now().UnixNano()
	inv, err := s.InvalidateLink(carol, &aimemoryv1.InvalidateLinkRequest{SourceId: a.Id, TargetId: b.Id, Relation: "related_to"})
	if err != nil || !inv.Found || inv.PreviousValidUntil != 0 || inv.Link.ValidUntil != t2 || inv.Link.InvalidatedBy != "ai:carol" || inv.Link.InvalidatedAt != t2 {
		t.Fatalf("invalidate = %v, %v", inv, err)
	}
	inv, err = s.InvalidateLink(carol, &aimemoryv1.InvalidateLinkRequest{SourceId: a.Id, TargetId: b.Id, Relation: "related_to", ValidUntil: proto.Int64(t2 - 1)})
	if err != nil || inv.PreviousValidUntil != t2 || inv.Link.ValidUntil != t2-1 {
		t.Fatalf("re-invalidate = %v, %v", inv, err)
	}
	// A link that does not exist between existing memories: found false.
	if inv, err := s.InvalidateLink(carol, &aimemoryv1.InvalidateLinkRequest{SourceId: a.Id, TargetId: b.Id, Relation: "supersedes"}); err != nil || inv.Found {
		t.Fatalf("missing link = %v, %v", inv, err)
	}
	if _, err := s.InvalidateLink(carol, &aimemoryv1.InvalidateLinkRequest{SourceId: a.Id, TargetId: "gone", Relation: "supersedes"}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing memory = %v", err)
	}
	if _, err := s.InvalidateLink(carol, &aimemoryv1.InvalidateLinkRequest{SourceId: a.Id, TargetId: b.Id}); err == nil || !strings.Contains(err.Error(), "relation") {
		t.Fatalf("relation is required: %v", err)
	}

	// Revive: a new interval, the old one kept in history.
	clk.Add(time.Minute)
	t3 := clk.Now().UnixNano()
	r = putLinkOK(t, s, a.Id, b.Id, "related_to", "ai:dave")
	if r.Outcome != aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_REVIVED || r.Link.ValidFrom != t3 || r.Link.ValidUntil != 0 ||
		r.Link.ObservedBy != "ai:dave" || r.Link.InvalidatedBy != "" || r.Link.CreatedAt != t0 || len(r.Link.History) != 1 {
		t.Fatalf("revive = %v", r)
	}
	if h := r.Link.History[0]; h.ValidFrom != t0 || h.ValidUntil != t2-1 || h.ObservedBy != "ai:alice" || h.InvalidatedBy != "ai:carol" {
		t.Fatalf("history = %v", h)
	}

	// Point in time: the link as it was at each instant.
	at := func(ts int64) *aimemoryv1.Link {
		resp, err := s.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, Direction: aimemoryv1.Direction_DIRECTION_OUT, ValidAt: ts})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Links) == 0 {
			return nil
		}
		return resp.Links[0]
	}
	if l := at(t0 - 1); l != nil {
		t.Errorf("before creation: %v", l)
	}
	if l := at(t0); l == nil || l.ObservedBy != "ai:alice" || l.ValidUntil != t2-1 {
		t.Errorf("at creation (inclusive): %v", l)
	}
	if l := at(t2 - 1); l != nil {
		t.Errorf("at the end (exclusive): %v", l)
	}
	if l := at(t3 - 1); l != nil {
		t.Errorf("between invalidation and revival: %v", l)
	}
	if l := at(t3); l == nil || l.ObservedBy != "ai:dave" {
		t.Errorf("after revival: %v", l)
	}

	// A future end is moved by a new link call without a new interval.
	clk.Add(time.Minute)
	future := clk.Now().Add(time.Hour).UnixNano()
	if _, err := s.InvalidateLink(carol, &aimemoryv1.InvalidateLinkRequest{SourceId: a.Id, TargetId: b.Id, Relation: "related_to", ValidUntil: proto.Int64(future)}); err != nil {
		t.Fatal(err)
	}
	r = putLinkOK(t, s, a.Id, b.Id, "related_to", "ai:erin")
	if r.Outcome != aimemoryv1.PutLinkOutcome_PUT_LINK_OUTCOME_REVIVED || r.Link.ValidFrom != t3 || r.Link.ValidUntil != 0 || len(r.Link.History) != 1 || r.Link.ObservedBy != "ai:dave" {
		t.Fatalf("cancel a future end = %v", r)
	}
}

func testLinkHistoryIsBounded(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	a := Store(t, s, Mem("a", "x"))
	b := Store(t, s, Mem("b", "x"))
	var last *aimemoryv1.PutLinkResponse
	for range maxLinkHistory + 5 {
		last = putLinkOK(t, s, a.Id, b.Id, "supersedes", "ai:t")
		clk.Add(time.Second)
		if _, err := s.InvalidateLink(ctx, &aimemoryv1.InvalidateLinkRequest{SourceId: a.Id, TargetId: b.Id, Relation: "supersedes"}); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Second)
	}
	if n := len(last.Link.History); n != maxLinkHistory {
		t.Fatalf("history %d, want %d", n, maxLinkHistory)
	}
}

func testGetLinksFiltersAndNodes(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	a := Store(t, s, Mem("a", "x"))
	b := Store(t, s, Mem("b", "x", InNS("ns/b")))
	c := Store(t, s, Mem("c", "x"))
	putLinkOK(t, s, a.Id, b.Id, "supersedes", "ai:one")
	putLinkOK(t, s, a.Id, c.Id, "related_to", "ai:two")
	putLinkOK(t, s, c.Id, a.Id, "contradicts", "ai:one")

	get := func(req *aimemoryv1.GetLinksRequest) *aimemoryv1.GetLinksResponse {
		t.Helper()
		resp, err := s.GetLinks(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	targets := func(ls []*aimemoryv1.Link) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.SourceId[:0]+titleOf(t, s, l.SourceId)+">"+titleOf(t, s, l.TargetId))
		}
		slices.Sort(out)
		return out
	}
	if got := targets(get(&aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, Relation: "supersedes"}).Links); !slices.Equal(got, []string{"a>b"}) {
		t.Errorf("relation filter = %v", got)
	}
	if got := targets(get(&aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, ObservedBy: &aimemoryv1.AgentSet{Ids: []string{"ai:one"}}}).Links); !slices.Equal(got, []string{"a>b", "c>a"}) {
		t.Errorf("observer filter = %v", got)
	}
	if got := get(&aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, ObservedBy: &aimemoryv1.AgentSet{}}).Links; len(got) != 0 {
		t.Errorf("an empty observer set must keep nothing: %v", got)
	}
	resp := get(&aimemoryv1.GetLinksRequest{Ids: []string{a.Id, "ghost", a.Id}, Direction: aimemoryv1.Direction_DIRECTION_OUT, IncludeNodes: true})
	if !slices.Equal(resp.NotFound, []string{"ghost"}) || len(resp.Links) != 2 || len(resp.Nodes) != 2 {
		t.Fatalf("nodes = %v", resp)
	}
	for _, n := range resp.Nodes {
		if n.Id == b.Id && (n.Title != "b" || n.Namespace != "ns/b") {
			t.Errorf("node = %v", n)
		}
	}
	if _, err := s.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, Relation: "likes"}); err == nil {
		t.Error("unknown relation accepted")
	}
	if _, err := s.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, ObservedBy: &aimemoryv1.AgentSet{Ids: []string{"bad id"}}}); err == nil {
		t.Error("bad observer accepted")
	}
}

// testTraverse: the walk reports each memory once, at its first depth,
// with the earliest hop reaching it and its summary, level by level in
// hop order; the limit cuts a level; filters apply to every hop.
func testTraverse(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	a := Store(t, s, Mem("a", "x"))
	b := Store(t, s, Mem("b", "x"))
	c := Store(t, s, Mem("c", "x", InNS("ns/c")))
	d := Store(t, s, Mem("d", "x"))
	for _, l := range []struct{ src, dst, rel string }{
		{c.Id, d.Id, "related_to"}, // d first reached from c: c's hop is older
		{a.Id, c.Id, "related_to"}, {a.Id, b.Id, "supersedes"},
		{b.Id, d.Id, "related_to"}, {d.Id, a.Id, "derived_from"}, // a cycle back to the source
	} {
		putLinkOK(t, s, l.src, l.dst, l.rel, "ai:t")
		clk.Add(time.Second)
	}
	walk := func(req *aimemoryv1.TraverseRequest) string {
		t.Helper()
		resp, err := s.Traverse(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range resp.Nodes {
			out = append(out, fmt.Sprintf("%s/%d/%d/%s/%s/%v", n.Title, n.Depth, n.From, n.Link.Relation, n.Namespace, n.Reversed))
		}
		return fmt.Sprintf("%v truncated=%v missing=%v", out, resp.Truncated, resp.SourceNotFound)
	}
	out := aimemoryv1.Direction_DIRECTION_OUT
	for _, tc := range []struct {
		req  *aimemoryv1.TraverseRequest
		want string
	}{
		{&aimemoryv1.TraverseRequest{SourceId: a.Id, MaxDepth: 5, Direction: out, Limit: 10},
			"[c/1/0/related_to/ns/c/false b/1/0/supersedes/global/false d/2/1/related_to/global/false] truncated=false missing=false"},
		{&aimemoryv1.TraverseRequest{SourceId: a.Id, MaxDepth: 1, Direction: out, Limit: 10},
			"[c/1/0/related_to/ns/c/false b/1/0/supersedes/global/false] truncated=false missing=false"},
		{&aimemoryv1.TraverseRequest{SourceId: a.Id, MaxDepth: 5, Direction: out, Limit: 1},
			"[c/1/0/related_to/ns/c/false] truncated=true missing=false"},
		{&aimemoryv1.TraverseRequest{SourceId: a.Id, MaxDepth: 5, Direction: out, Relation: "supersedes", Limit: 10},
			"[b/1/0/supersedes/global/false] truncated=false missing=false"},
		{&aimemoryv1.TraverseRequest{SourceId: a.Id, MaxDepth: 2, Direction: aimemoryv1.Direction_DIRECTION_IN, Limit: 10},
			"[d/1/0/derived_from/global/true c/2/1/related_to/ns/c/true b/2/1/related_to/global/true] truncated=false missing=false"},
		{&aimemoryv1.TraverseRequest{SourceId: d.Id, MaxDepth: 1, Direction: aimemoryv1.Direction_DIRECTION_BOTH, Limit: 10},
			"[c/1/0/related_to/ns/c/true b/1/0/related_to/global/true a/1/0/derived_from/global/false] truncated=false missing=false"},
		{&aimemoryv1.TraverseRequest{SourceId: "0190aaaa-0000-7000-8000-000000000000", MaxDepth: 1, Limit: 1},
			"[] truncated=false missing=true"},
	} {
		if got := walk(tc.req); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.req, got, tc.want)
		}
	}
	for _, bad := range []*aimemoryv1.TraverseRequest{
		{SourceId: a.Id, MaxDepth: 0, Limit: 1}, {SourceId: a.Id, MaxDepth: 6, Limit: 1},
		{SourceId: a.Id, MaxDepth: 1, Limit: 0}, {SourceId: a.Id, MaxDepth: 1, Limit: 1001},
		{SourceId: a.Id, MaxDepth: 1, Limit: 1, Relation: "likes"}, {SourceId: "", MaxDepth: 1, Limit: 1},
	} {
		if _, err := s.Traverse(ctx, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func titleOf(t *testing.T, s storage.Backend, id string) string {
	t.Helper()
	m := get(t, s, id)
	if m == nil {
		return "?"
	}
	return m.Title
}

func testLinkTimeline(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	src := Store(t, s, Mem("src", "x"))
	var ids []string
	var times []int64
	for i := range 5 {
		m := Store(t, s, Mem(string(rune('a'+i)), "x"))
		ids = append(ids, m.Id)
		times = append(times, clk.Now().UnixNano())
		putLinkOK(t, s, src.Id, m.Id, "related_to", "ai:t")
		clk.Add(time.Minute)
	}
	// Invalidate and revive the first: it appears twice, once per interval.
	if _, err := s.InvalidateLink(ctx, &aimemoryv1.InvalidateLinkRequest{SourceId: src.Id, TargetId: ids[0], Relation: "related_to"}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	revived := clk.Now().UnixNano()
	putLinkOK(t, s, src.Id, ids[0], "related_to", "ai:t")
	// An inbound link never appears.
	putLinkOK(t, s, ids[1], src.Id, "supersedes", "ai:t")

	tl := func(req *aimemoryv1.LinkTimelineRequest) ([]string, uint32) {
		t.Helper()
		req.SourceId = src.Id
		resp, err := s.LinkTimeline(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range resp.Events {
			out = append(out, e.Target.Title)
		}
		return out, resp.Total
	}
	if got, total := tl(&aimemoryv1.LinkTimelineRequest{}); !slices.Equal(got, []string{"a", "b", "c", "d", "e", "a"}) || total != 6 {
		t.Errorf("timeline = %v (%d)", got, total)
	}
	if got, _ := tl(&aimemoryv1.LinkTimelineRequest{Since: times[1], Until: times[3]}); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("window (inclusive) = %v", got)
	}
	if got, total := tl(&aimemoryv1.LinkTimelineRequest{Limit: 2}); !slices.Equal(got, []string{"a", "b"}) || total != 6 {
		t.Errorf("limit = %v (%d)", got, total)
	}
	if got, _ := tl(&aimemoryv1.LinkTimelineRequest{Since: revived}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("since revival = %v", got)
	}
	if got, _ := tl(&aimemoryv1.LinkTimelineRequest{Since: times[3], Until: times[1]}); len(got) != 0 {
		t.Errorf("since > until = %v", got)
	}
	if _, err := s.LinkTimeline(ctx, &aimemoryv1.LinkTimelineRequest{SourceId: "ghost"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("unknown source: %v", err)
	}
	if _, err := s.LinkTimeline(ctx, &aimemoryv1.LinkTimelineRequest{SourceId: src.Id, Limit: 1001}); err == nil {
		t.Error("limit 1001 accepted")
	}
}

// TestLinksCascadeAtomically: deleting a memory removes every link touching
// it in the same transaction, so no edge ever names a missing memory; a
// refused delete removes nothing.
func testLinksCascadeAtomically(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{Policy: denyDeleteIn("locked")})
	a := Store(t, s, Mem("a", "x"))
	b := Store(t, s, Mem("b", "x"))
	c := Store(t, s, Mem("c", "x", Tier("short")))
	l := Store(t, s, Mem("l", "x", InNS("locked")))
	putLinkOK(t, s, a.Id, b.Id, "related_to", "ai:t")
	putLinkOK(t, s, b.Id, a.Id, "supersedes", "ai:t")
	putLinkOK(t, s, b.Id, c.Id, "derived_from", "ai:t")
	putLinkOK(t, s, l.Id, a.Id, "related_to", "ai:t")

	// A delete the policy refuses (one of two ids) rolls back entirely.
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.Id, l.Id}}); !errors.Is(err, storage.ErrDenied) {
		t.Fatalf("delete locked = %v", err)
	}
	if n := linkRows(t, s); n != 4 {
		t.Fatalf("a refused delete removed links: %d left", n)
	}
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.Id}}); err != nil {
		t.Fatal(err)
	}
	if n := linkRows(t, s); n != 1 {
		t.Fatalf("after delete: %d links, want the one b→c", n)
	}
	if _, err := s.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: b.Id, TargetId: a.Id}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("link to a deleted memory = %v", err)
	}
	clk.Add(7 * time.Hour) // c expires
	if _, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{}); err != nil {
		t.Fatal(err)
	}
	if n := linkRows(t, s); n != 0 {
		t.Fatalf("after GC: %d links", n)
	}
	check(t, s)
}

// denyDeleteIn refuses deletes of memories in one namespace.
type denyDeleteIn string

func (d denyDeleteIn) CheckWrite(_ context.Context, w storage.Write) storage.Verdict {
	if w.Op == storage.OpDelete && w.Old.GetNamespace() == string(d) {
		return storage.Verdict{Decision: storage.Deny, Reason: "locked"}
	}
	return storage.Verdict{}
}
