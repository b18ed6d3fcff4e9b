package caller

import "testing"

func TestInScope(t *testing.T) {
	c := Caller{Principal: "alice", Scope: "team-a shared/"}
	for ns, want := range map[string]bool{
		"team-a": true, "team-a/x": true, "team-ab": false, "shared/x": true, "shared": false, "other": false,
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
	if !(Caller{Scope: "*"}).InScope("anything") {
		t.Error("\"*\" must allow every namespace")
	}
	if !(Caller{}).InScope("anything") {
		t.Error("an empty scope must allow every namespace")
	}
}
