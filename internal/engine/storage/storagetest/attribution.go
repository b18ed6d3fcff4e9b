package storagetest

import (
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// testAttribution: created_by and updated_by come from the caller in the
// context alone. A request's fields and metadata.agent_id (claimed
// provenance) set neither; a merge by another identity keeps created_by
// and names the merger as updated_by, so the record names both.
func testAttribution(t *testing.T, o Opener) {
	s, _ := o.open(t, storage.Options{})
	alice, bob, carol := as("ai:alice"), as("ai:bob"), as("ai:carol")
	authors := func(what string, m *aimemoryv1.Memory, created, updated string) {
		t.Helper()
		if m.GetCreatedBy() != created || m.GetUpdatedBy() != updated {
			t.Errorf("%s: created_by %q updated_by %q, want %q %q", what, m.GetCreatedBy(), m.GetUpdatedBy(), created, updated)
		}
		if got := getAs(t, alice, s, m.GetId()); len(got.Memories) != 1 || got.Memories[0].CreatedBy != created || got.Memories[0].UpdatedBy != updated {
			t.Errorf("%s: read back %v", what, got.Memories)
		}
	}
	forged := Mem("Shared fact", "alice's version", InNS("team"), meta(`{"agent_id":"ai:claimed"}`), func(m *aimemoryv1.Memory) {
		m.CreatedBy, m.UpdatedBy = "ai:forged", "ai:forged"
	})
	a := storeAs(t, alice, s, forged)
	authors("store", a, "ai:alice", "ai:alice")
	if agent := metadataAgent(t, a); agent != "ai:claimed" {
		t.Errorf("metadata.agent_id = %q: claimed provenance is kept as given", agent)
	}

	// Another identity stores the same title: a merge, naming both.
	resp, err := s.StoreMemory(bob, &aimemoryv1.StoreMemoryRequest{Memory: Mem("Shared fact", "bob's version", InNS("team"),
		meta(`{"agent_id":"ai:alice"}`), func(m *aimemoryv1.Memory) { m.CreatedBy, m.UpdatedBy = "ai:bob", "ai:alice" })})
	if err != nil || resp.Outcome != aimemoryv1.StoreOutcome_STORE_OUTCOME_MERGED || resp.Memory.Id != a.Id || resp.Memory.Content != "bob's version" {
		t.Fatalf("merge = %v, %v", resp, err)
	}
	authors("merge by another identity", resp.Memory, "ai:alice", "ai:bob")

	// An update names its caller; metadata cannot change the authors.
	up, err := s.UpdateMemory(carol, &aimemoryv1.UpdateMemoryRequest{Id: a.Id, Content: proto.String("carol's edit"), MetadataJson: []byte(`{"agent_id":"ai:carol","created_by":"ai:carol"}`)})
	if err != nil {
		t.Fatal(err)
	}
	authors("update", up.Memory, "ai:alice", "ai:carol")

	// A recall's touch is not a write by its caller.
	if _, err := s.TouchMemories(bob, &aimemoryv1.TouchMemoriesRequest{Ids: []string{a.Id}}); err != nil {
		t.Fatal(err)
	}
	authors("touch", get(t, s, a.Id), "ai:alice", "ai:carol")

	// An entity is created by its caller.
	e, err := s.RegisterEntity(bob, &aimemoryv1.RegisterEntityRequest{CanonicalName: "Postgres", Namespace: "team"})
	if err != nil {
		t.Fatal(err)
	}
	authors("entity", get(t, s, e.Entity.Id), "ai:bob", "ai:bob")

	// No caller in the context: nothing is written, no author invented.
	if _, err := s.StoreMemory(noCaller, &aimemoryv1.StoreMemoryRequest{Memory: forged2()}); !errors.Is(err, storage.ErrDenied) {
		t.Errorf("store without a caller: %v, want a refusal", err)
	}
}

func forged2() *aimemoryv1.Memory {
	return Mem("Uncalled", "x", meta(`{"agent_id":"ai:claimed"}`), func(m *aimemoryv1.Memory) { m.CreatedBy = "ai:forged" })
}

func metadataAgent(t *testing.T, m *aimemoryv1.Memory) string {
	t.Helper()
	var meta struct {
		AgentID string `json:"agent_id"`
	}
	if err := json.Unmarshal(m.GetMetadataJson(), &meta); err != nil {
		t.Fatalf("metadata %s: %v", m.GetMetadataJson(), err)
	}
	return meta.AgentID
}
