package storagetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func testGetByPrefix(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	var ids []string
	for i := range 40 {
		ids = append(ids, Store(t, s, Mem(fmt.Sprint("m", i), "x")).Id)
	}
	slices.Sort(ids)
	// Two sorted neighbours sharing a first character make an ambiguous prefix.
	var shared string
	for i := 1; i < len(ids); i++ {
		if ids[i][0] == ids[i-1][0] {
			shared = ids[i][:1]
			break
		}
	}
	var n int
	for _, id := range ids {
		if strings.HasPrefix(id, shared) {
			n++
		}
	}
	_, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{shared}, AllowPrefix: true})
	var amb *storage.AmbiguousError
	if !errors.As(err, &amb) || !errors.Is(err, storage.ErrAmbiguous) || amb.Count != n ||
		!strings.HasPrefix(err.Error(), fmt.Sprintf("ambiguous ID prefix '%s': %d matches: ", shared, n)) {
		t.Errorf("ambiguous: %v", err)
	}
	unique := ids[0][:13]
	resp, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{unique, ids[1], "zzz"}, AllowPrefix: true})
	if err != nil || len(resp.Memories) != 2 || resp.Memories[0].Id != ids[0] || resp.Memories[1].Id != ids[1] ||
		!reflect.DeepEqual(resp.NotFound, []string{"zzz"}) {
		t.Errorf("prefix get = %v, %v", resp, err)
	}
	resp, _ = s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{unique}})
	if len(resp.Memories) != 0 || len(resp.NotFound) != 1 {
		t.Errorf("prefix matched without allow_prefix: %v", resp)
	}
}

// testPrefixPastUnreadable: a memory the caller may not read is absent to
// it, also as an exact id: the id given resolves as a prefix among the
// caller's own (before the records shell, an unreadable exact id ended
// the lookup, which told the caller that it exists).
func testPrefixPastUnreadable(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	a, b := tenant("team-a", "team-a"), tenant("team-b", "team-b")
	secret := storeAs(t, a, s, Mem("db password", "hunter2", InNS("team-a")))
	longer := secret.Id + "-b"
	res, err := s.Import(Operator(), []*aimemoryv1.ExportRecord{{Record: &aimemoryv1.ExportRecord_Memory{Memory: &aimemoryv1.Memory{
		Id: longer, Title: "team-b note", Content: "x", Namespace: "team-b", Tier: "long", Priority: 5, Confidence: 1,
		CreatedAt: 1, UpdatedAt: 1, CreatedBy: "ai:seed"}}}})
	if err != nil || len(res) != 1 || res[0].GetOutcome() != "created" {
		t.Fatalf("import: %v, %v", res, err)
	}
	resp, err := s.GetMemories(b, &aimemoryv1.GetMemoriesRequest{Ids: []string{secret.Id}, AllowPrefix: true})
	if err != nil || len(resp.Memories) != 1 || resp.Memories[0].Id != longer || len(resp.NotFound) != 0 {
		t.Errorf("team-b's get of %s by prefix = %v, %v; want its own %s", secret.Id, resp, err, longer)
	}
	resp, err = s.GetMemories(a, &aimemoryv1.GetMemoriesRequest{Ids: []string{secret.Id}, AllowPrefix: true})
	if err != nil || len(resp.Memories) != 1 || resp.Memories[0].Id != secret.Id {
		t.Errorf("team-a's exact get = %v, %v", resp, err)
	}
}
