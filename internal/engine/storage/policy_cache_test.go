package storage

import "testing"

// A cached stored policy is the parse; a bad one is an error every time
// and never cached.
func TestParseStoredCaches(t *testing.T) {
	const doc = `{"write":"owner","delete":"approve"}`
	first, err := parseStored(doc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := parseStored(doc)
	if err != nil || again != first {
		t.Fatalf("cached %+v, %v; want %+v", again, err, first)
	}
	for range 2 {
		if _, err := parseStored(`{"write":"maybe"}`); err == nil {
			t.Fatal("a bad policy parsed")
		}
	}
	storedPolicies.Lock()
	_, cached := storedPolicies.m[`{"write":"maybe"}`]
	storedPolicies.Unlock()
	if cached {
		t.Fatal("a bad policy was cached")
	}
}
