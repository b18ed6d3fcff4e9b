package boltstore

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

func TestLinksCascadeOnDelete(t *testing.T) {
	ctx := context.Background()
	s, clk := openTest(t, Options{})
	a := store(t, s, mem("a", "x"))
	b := store(t, s, mem("b", "x"))
	c := store(t, s, mem("c", "x", tier("short")))
	link := func(from, to, rel string) *aimemoryv1.Link {
		return &aimemoryv1.Link{SourceId: from, TargetId: to, Relation: rel, CreatedAt: 1}
	}
	ab, ca, bc, ab2 := link(a.Id, b.Id, "related_to"), link(c.Id, a.Id, "supersedes"), link(b.Id, c.Id, "related_to"), link(a.Id, b.Id, "derived_from")
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, l := range []*aimemoryv1.Link{ab, ca, bc, ab2} {
			if err := putLink(tx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
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
	countLinks := func() (out, in int) {
		s.db.View(func(tx *bolt.Tx) error {
			out, in = tx.Bucket(bucketLinksOut).Stats().KeyN, tx.Bucket(bucketLinksIn).Stats().KeyN
			return nil
		})
		return
	}
	if out, in := countLinks(); out != 1 || in != 1 {
		t.Errorf("after delete links out %d in %d, want 1 and 1", out, in)
	}
	got, _ := s.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{b.Id, c.Id}})
	if !reflect.DeepEqual(linkSet(got.Links), names(bc)) {
		t.Errorf("remaining links %v", linkSet(got.Links))
	}
	// GC cascades too.
	clk.Add(7 * time.Hour)
	if _, err := s.CollectGarbage(ctx, &aimemoryv1.CollectGarbageRequest{}); err != nil {
		t.Fatal(err)
	}
	if out, in := countLinks(); out != 0 || in != 0 {
		t.Errorf("after GC links out %d in %d", out, in)
	}
	if st, _ := s.Stats(ctx); st.Links != 0 {
		t.Errorf("stats links %d", st.Links)
	}
}
