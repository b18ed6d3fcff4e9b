package storagetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func testFilters(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	t0 := clk.Now().UnixNano()
	add := func(title, ns string, mod ...func(*aimemoryv1.Memory)) {
		Store(t, s, Mem(title, "common", append(mod, InNS(ns))...))
		clk.Add(time.Second)
	}
	add("root", "org")
	add("unit", "org/unit")
	add("team", "org/unit/team")
	add("alice private", "org/unit/team/alice", meta(`{"agent_id":"alice"}`))
	add("bob private", "org/unit/team/bob", meta(`{"agent_id":"bob"}`))
	add("bob team", "org/unit/team/bob", meta(`{"agent_id":"bob","scope":"team"}`), Tags("x", "shared"))
	add("bob unit", "org/unit/team/bob", meta(`{"scope":"unit"}`), Tier("long"))
	add("bob org", "org/unit/team/bob", meta(`{"scope":"org"}`))
	add("bob collective", "org/unit/team/bob", meta(`{"scope":"collective"}`), Tags("shared"))
	add("other team", "org/unit/other", meta(`{"scope":"team"}`))
	add("elsewhere unit", "org/else", meta(`{"scope":"unit"}`))
	add("flat", "flat", meta(`{"scope":"team"}`))

	tests := []struct {
		name string
		f    *aimemoryv1.Filter
		want []string
	}{
		{"exact namespace", &aimemoryv1.Filter{Namespace: "org/unit/team"}, []string{"team"}},
		{"ancestors", &aimemoryv1.Filter{Namespace: "org/unit/team/alice", NamespaceAncestors: true},
			[]string{"alice private", "root", "team", "unit"}},
		{"flat ancestors stay exact", &aimemoryv1.Filter{Namespace: "org", NamespaceAncestors: true}, []string{"root"}},
		{"tier", &aimemoryv1.Filter{Tier: "long"}, []string{"bob unit"}},
		{"agent", &aimemoryv1.Filter{AgentId: "bob"}, []string{"bob private", "bob team"}},
		{"tag exact element", &aimemoryv1.Filter{Tag: "shared"}, []string{"bob collective", "bob team"}},
		{"tag no substring", &aimemoryv1.Filter{Tag: "share"}, nil},
		{"since/until inclusive", &aimemoryv1.Filter{CreatedSince: t0 + int64(time.Second), CreatedUntil: t0 + int64(3*time.Second)},
			[]string{"alice private", "team", "unit"}},
		// alice: A = [org/unit/team/alice, org/unit/team, org/unit, org]:
		// "other team" is not under A[1], "elsewhere unit" not under A[2].
		{"as alice", &aimemoryv1.Filter{AsAgent: "org/unit/team/alice"},
			[]string{"alice private", "bob collective", "bob org", "bob team", "bob unit"}},
		{"as bob in his namespace", &aimemoryv1.Filter{AsAgent: "org/unit/team/bob", Namespace: "org/unit/team/bob"},
			[]string{"bob collective", "bob org", "bob private", "bob team", "bob unit"}},
		{"as flat agent", &aimemoryv1.Filter{AsAgent: "flat"}, []string{"bob collective"}},
		// A = [org/x, org]: team scope means under org; unit and org levels are missing.
		{"as org/x", &aimemoryv1.Filter{AsAgent: "org/x"}, []string{"bob collective", "bob team", "other team"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := s.ListMemories(AsOperator(t.Context()), &aimemoryv1.ListMemoriesRequest{Filter: tc.f, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := memTitles(l.Memories)
			slices.Sort(got)
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("list = %q\nwant %q", got, tc.want)
			}
			sr := TitlesOf(Search(t, s, &aimemoryv1.SearchMemoriesRequest{Query: "common", Filter: tc.f}))
			slices.Sort(sr)
			if len(sr) == 0 {
				sr = nil
			}
			if !reflect.DeepEqual(sr, tc.want) {
				t.Errorf("search = %q\nwant %q", sr, tc.want)
			}
		})
	}
}
