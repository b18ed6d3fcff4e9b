package caller

import "testing"

func TestInScope(t *testing.T) {
	c := Caller{Principal: "alice", Scope: "team-a shared/ =solo"}
	for ns, want := range map[string]bool{
		"team-a": true, "team-a/x": true, "team-ab": false, "shared/x": true, "shared": false, "other": false,
		"solo": true, "solo/x": false,
	} {
		if got := c.InScope(ns); got != want {
			t.Errorf("InScope(%q) = %v, want %v", ns, got, want)
		}
	}
	exact := Caller{Principal: "spiffe://example.org/web", Scope: "=example.org/web"}
	for ns, want := range map[string]bool{"example.org/web": true, "example.org/web/x": false, "example.org": false} {
		if got := exact.InScope(ns); got != want {
			t.Errorf("exact InScope(%q) = %v, want %v", ns, got, want)
		}
	}
	if (Caller{}).InScope("anything") || (Caller{Scope: " "}).InScope("") {
		t.Error("an empty scope must allow no namespace")
	}
	if !(Caller{Scope: AllNamespaces}).InScope("anything") {
		t.Error("the grant of every namespace must allow any")
	}
	if (Caller{Scope: "team-a *"}).InScope("other") {
		t.Error("a * among prefixes must not widen them")
	}
}

func TestIntersect(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{AllNamespaces, AllNamespaces, AllNamespaces},
		{AllNamespaces, "team-a", "team-a"},
		{"team-a shared/", AllNamespaces, "team-a shared/"},
		{"team-a", "team-a/x", "team-a/x"},
		{"team-a/x", "team-a", "team-a/x"},
		{"team-a", "team-b", ""},
		{"team-a", "team-ab", ""},
		{"team-a shared/", "shared/x team-a/y other", "team-a/y shared/x"},
		{"", AllNamespaces, ""},
		{"team-a", "", ""},
		{"team-a", "=team-a", "=team-a"},
		{"=team-a", "team-a/x", ""},
		{"=team-a", "=team-a shared/", "=team-a"},
		{"shared/", "shared", "shared/"},
	} {
		if got := Intersect(tc.a, tc.b); got != tc.want {
			t.Errorf("Intersect(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
