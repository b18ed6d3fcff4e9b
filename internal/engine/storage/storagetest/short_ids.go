package storagetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// testShortIDs: each prefix is as short as allowed and shared with no
// other live or archived id, checked against every id by brute force. A
// minimum of 1 makes collisions common among a few hundred random ids.
func testShortIDs(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	var archived, live []string
	for i := range 150 {
		archived = append(archived, Store(t, s, Mem(fmt.Sprintf("gone %d", i), "x", Tier("short"))).Id)
	}
	clk.Add(7 * time.Hour) // the short ones expire and are archived
	if _, err := s.CollectGarbage(AsOperator(t.Context()), &aimemoryv1.CollectGarbageRequest{Archive: true}); err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		live = append(live, Store(t, s, Mem(fmt.Sprintf("kept %d", i), "x")).Id)
	}
	all := append(append([]string(nil), live...), archived...)
	for _, minLen := range []uint32{1, 8} {
		resp, err := s.ShortIDs(AsOperator(t.Context()), &aimemoryv1.ShortIdsRequest{Ids: all, MinLength: minLen})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Prefixes) != len(all) {
			t.Fatalf("min %d: %d prefixes for %d ids", minLen, len(resp.Prefixes), len(all))
		}
		for i, id := range all {
			p := resp.Prefixes[i]
			if !strings.HasPrefix(id, p) || len(p) < int(minLen) {
				t.Fatalf("min %d: %q is not a prefix of %s of at least that length", minLen, p, id)
			}
			shares := func(prefix string) bool {
				for _, other := range all {
					if other != id && strings.HasPrefix(other, prefix) {
						return true
					}
				}
				return false
			}
			if shares(p) {
				t.Errorf("min %d: prefix %q of %s is shared", minLen, p, id)
			}
			if len(p) > int(minLen) && !shares(p[:len(p)-1]) {
				t.Errorf("min %d: prefix %q of %s is longer than needed", minLen, p, id)
			}
		}
	}
	// The prefix resolves back to the memory wherever a prefix is accepted.
	resp, err := s.ShortIDs(AsOperator(t.Context()), &aimemoryv1.ShortIdsRequest{Ids: live[:1], MinLength: 8})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMemories(AsOperator(t.Context()), &aimemoryv1.GetMemoriesRequest{Ids: resp.Prefixes, AllowPrefix: true})
	if err != nil || len(got.Memories) != 1 || got.Memories[0].Id != live[0] {
		t.Errorf("prefix %s resolved to %v (%v), want %s", resp.Prefixes[0], got, err, live[0])
	}
	if _, err := s.ShortIDs(AsOperator(t.Context()), &aimemoryv1.ShortIdsRequest{Ids: []string{""}}); err == nil {
		t.Error("an empty id was accepted")
	}
}
