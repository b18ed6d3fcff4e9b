package apitoken

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestCreateLookupRevoke(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, nil)
	tok, key, err := s.Create("alice", []string{"core"}, []string{"team-a"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(s.Path())
	if strings.Contains(string(raw), key) {
		t.Fatal("the file holds the secret")
	}
	if fi, _ := os.Stat(s.Path()); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := s.Lookup(key)
	if err != nil || got.Principal != "alice" || got.Namespaces[0] != "team-a" {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	// One character changed: never the one it was (a key ending in "A" made
	// this case the key itself, 1 run in 64).
	other := "A"
	if strings.HasSuffix(key, other) {
		other = "B"
	}
	for _, bad := range []string{"", "aim_", key + "x", key[:len(key)-1] + other, "Bearer " + key} {
		if _, err := s.Lookup(bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("Lookup(%q) = %v, want ErrUnknown", bad, err)
		}
	}
	// Another process (the CLI) revokes: this store sees it on the next lookup.
	if _, err := Open(dir, nil).Revoke(tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(key); !errors.Is(err, ErrUnknown) {
		t.Fatalf("revoked key: %v", err)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Revoked == nil {
		t.Fatalf("List = %+v", list)
	}
}
