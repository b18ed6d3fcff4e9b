package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func testCountNamespaces(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	for i, ns := range []string{"a", "a/b", "a/b", "a/b/c", "a_b", "ab", "A/b", "x"} {
		Store(t, s, Mem(fmt.Sprint("m", i), "x", InNS(ns)))
	}
	Store(t, s, Mem("expiring", "x", InNS("a/b"), Tier("short")))
	clk.Add(7 * time.Hour) // the short one has expired: not counted
	count := func(prefix string, limit uint32) string {
		t.Helper()
		resp, err := s.CountNamespaces(ctx, &aimemoryv1.CountNamespacesRequest{Prefix: prefix, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		out := fmt.Sprint(resp.Total)
		for _, c := range resp.Namespaces {
			out += fmt.Sprintf(" %s=%d", c.Key, c.Count)
		}
		return out
	}
	for _, tc := range []struct {
		prefix string
		limit  uint32
		want   string
	}{
		{"", 0, "8 a/b=2 A/b=1 a=1 a/b/c=1 a_b=1 ab=1 x=1"},
		// Literal, case-sensitive, on a segment boundary: not a_b, ab or A/b.
		{"a", 0, "4 a/b=2 a=1 a/b/c=1"},
		{"a/b", 0, "3 a/b=2 a/b/c=1"},
		{"a", 1, "4 a/b=2"},
		{"zzz", 0, "0"},
	} {
		if got := count(tc.prefix, tc.limit); got != tc.want {
			t.Errorf("prefix %q limit %d = %q, want %q", tc.prefix, tc.limit, got, tc.want)
		}
	}
	if _, err := s.CountNamespaces(ctx, &aimemoryv1.CountNamespacesRequest{Prefix: "a/"}); err == nil {
		t.Error("bad prefix accepted")
	}
}
