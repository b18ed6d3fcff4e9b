package storagetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func testLinksCascadeOnDelete(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	a := Store(t, s, Mem("a", "x"))
	b := Store(t, s, Mem("b", "x"))
	c := Store(t, s, Mem("c", "x", Tier("short")))
	link := func(from, to, rel string) *aimemoryv1.Link {
		return putLinkOK(t, s, from, to, rel, "ai:t").Link
	}
	ab, ca, bc, ab2 := link(a.Id, b.Id, "related_to"), link(c.Id, a.Id, "supersedes"), link(b.Id, c.Id, "related_to"), link(a.Id, b.Id, "derived_from")
	linkSet := func(ls []*aimemoryv1.Link) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.SourceId[:1]+l.TargetId[:1]+l.Relation)
		}
		slices.Sort(out)
		return out
	}
	names := func(ls ...*aimemoryv1.Link) []string { return linkSet(ls) }

	resp, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{a.Id, b.Id}, IncludeLinks: true})
	if err != nil || !reflect.DeepEqual(linkSet(resp.Links), names(ab, ab2, ca, bc)) {
		t.Errorf("include_links = %v, %v", linkSet(resp.Links), err)
	}
	for dir, want := range map[aimemoryv1.Direction][]string{
		aimemoryv1.Direction_DIRECTION_OUT:         names(ab, ab2),
		aimemoryv1.Direction_DIRECTION_IN:          names(ca),
		aimemoryv1.Direction_DIRECTION_BOTH:        names(ab, ab2, ca),
		aimemoryv1.Direction_DIRECTION_UNSPECIFIED: names(ab, ab2, ca),
	} {
		got, err := s.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{a.Id}, Direction: dir})
		if err != nil || !reflect.DeepEqual(linkSet(got.Links), want) {
			t.Errorf("links %v = %v, %v", dir, linkSet(got.GetLinks()), err)
		}
	}

	del, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.Id, "nope", a.Id}})
	if err != nil || !reflect.DeepEqual(del.Deleted, []string{a.Id}) || !reflect.DeepEqual(del.NotFound, []string{"nope"}) {
		t.Fatalf("delete = %v, %v", del, err)
	}
	if n := linkRows(t, s); n != 1 {
		t.Errorf("after delete %d links, want 1", n)
	}
	check(t, s)
	got, _ := s.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{b.Id, c.Id}})
	if !reflect.DeepEqual(linkSet(got.Links), names(bc)) {
		t.Errorf("remaining links %v", linkSet(got.Links))
	}
	// GC cascades too.
	clk.Add(7 * time.Hour)
	if _, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{}); err != nil {
		t.Fatal(err)
	}
	check(t, s)
	if st, _ := s.Stats(ctx); st.Links != 0 {
		t.Errorf("stats links %d", st.Links)
	}
}
