package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Attribution comes from the identity each host resolved, carried to the
// engine; namespaces stay collaborative, and a merge names both identities.
func TestMergeByAnotherIdentityNamesBoth(t *testing.T) {
	e := newEnv(t)
	alice := e.startHost([]string{"--agent-id", "ai:alice"})
	bob := e.startHost([]string{"--agent-id", "ai:bob"})

	first := alice.ok("memory_store", map[string]any{"format": "json", "title": "Release checklist", "content": "tag, build, publish", "namespace": "team"})
	got := alice.ok("memory_get", map[string]any{"id": first["id"], "format": "json"})
	if got["created_by"] != "ai:alice" || got["updated_by"] != "ai:alice" {
		t.Fatalf("new memory: created_by %v updated_by %v, want ai:alice for both", got["created_by"], got["updated_by"])
	}

	// Bob claims to be alice in the agent_id argument and in metadata: that
	// is recorded as claimed provenance, never as the author.
	merged := bob.ok("memory_store", map[string]any{"format": "json",
		"title": "Release checklist", "content": "tag, build, sign, publish", "namespace": "team",
		"agent_id": "ai:alice", "metadata": map[string]any{"created_by": "ai:mallory", "updated_by": "ai:mallory"},
	})
	if merged["id"] != first["id"] {
		t.Fatalf("same title and namespace did not merge: %v vs %v", merged["id"], first["id"])
	}
	got = bob.ok("memory_get", map[string]any{"id": first["id"], "format": "json"})
	if got["created_by"] != "ai:alice" || got["updated_by"] != "ai:bob" || got["content"] != "tag, build, sign, publish" {
		t.Fatalf("after bob's merge: %v", got)
	}

	// No tool argument sets the engine's fields.
	for _, field := range []string{"created_by", "updated_by"} {
		bob.fails("memory_store", map[string]any{"title": "x", "content": "y", field: "ai:mallory"}, field)
	}
}

// Namespaces beginning with "_" are the engine's: core tools cannot write
// there, and nobody reads another identity's inbox.
func TestGuardedNamespaces(t *testing.T) {
	e := newEnv(t)
	// Seed an inbox message for bob the way the messaging family's engine
	// operation will: the owner's write path, on the real data dir.
	seedInboxMessage(t, e.dataDir, "ai:bob", "Deploy note for bob", "the rollback word is kiwi")

	alice := e.startHost([]string{"--agent-id", "ai:alice"})
	for _, ns := range []string{"_agents", "_messages/ai:bob", "_messages/ai:alice", "_x"} {
		alice.fails("memory_store", map[string]any{"title": "t", "content": "c", "namespace": ns}, ns)
	}
	if out := alice.ok("memory_list", map[string]any{"namespace": "_messages/ai:bob", "format": "json"}); len(items(out)) != 0 {
		t.Errorf("alice lists bob's inbox: %v", out)
	}
	if out := alice.ok("memory_list", map[string]any{"format": "json"}); len(items(out)) != 0 {
		t.Errorf("alice's unfiltered list shows bob's message: %v", out)
	}
	if out := alice.ok("memory_search", map[string]any{"query": "kiwi", "format": "json"}); len(items(out)) != 0 {
		t.Errorf("alice finds bob's message: %v", out)
	}
	if out := alice.ok("memory_recall", map[string]any{"context": "rollback word kiwi", "format": "json"}); len(items(out)) != 0 {
		t.Errorf("alice recalls bob's message: %v", out)
	}

	bob := e.startHost([]string{"--agent-id", "ai:bob"})
	out := bob.ok("memory_search", map[string]any{"query": "kiwi", "format": "json"})
	if len(items(out)) != 1 {
		t.Fatalf("bob cannot find his own message: %v", out)
	}
	id := items(out)[0]["id"]
	bob.ok("memory_get", map[string]any{"id": id, "format": "json"})
	alice.fails("memory_get", map[string]any{"id": id}, "not found")
	// Nor may bob rewrite it with core tools.
	bob.fails("memory_store", map[string]any{"title": "Deploy note for bob", "content": "changed", "namespace": "_messages/ai:bob"}, "_messages/ai:bob")
}

// items returns the memories of a json-format list, search or recall result.
func items(out map[string]any) []map[string]any {
	var rows []map[string]any
	for _, key := range []string{"memories", "results"} {
		if list, ok := out[key].([]any); ok {
			for _, r := range list {
				rows = append(rows, r.(map[string]any))
			}
		}
	}
	return rows
}

func seedInboxMessage(t *testing.T, dataDir, to, title, content string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(ctx, filepath.Join(dataDir, "memory.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	owner := authz.AsOwner(caller.NewContext(ctx, caller.Caller{Principal: "ai:sender", Family: "power"}), authz.GuardMessages)
	if _, err := records.New(st).StoreMemory(owner, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
		Title: title, Content: content, Namespace: "_messages/" + to, Tier: "long", Confidence: 1, Priority: 5,
	}}); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
}

// A plugin holds only the assertion it was handed for a call: without it,
// or with it rewritten to name someone else, the engine refuses; and only
// hosts append to the audit log.
func TestPluginCannotForgeItsCaller(t *testing.T) {
	e := newEnv(t)
	e.pin("faults")
	h := e.startHost([]string{"--profile", "core,faults", "--agent-id", "ai:probe"})
	got := h.ok("fault_engine_probe", map[string]any{})
	want := map[string]any{"with_assertion": "OK", "without_assertion": "Unauthenticated", "tampered": "Unauthenticated", "audit_append": "PermissionDenied"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}
