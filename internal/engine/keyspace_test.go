package engine

import (
	"context"
	"os"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// A family keeps state in its own keyspace (_family/<name>) through the
// ordinary memory RPCs; the family in the host-signed assertion decides,
// so no other family can read, find, list, overwrite or link into it.
func TestFamilyKeyspaceIsTheFamilysOwn(t *testing.T) {
	dir := shortDir(t)
	ctx0, stop := context.WithCancel(storagetest.Operator())
	done := serveAsync(ctx0, Options{DataDir: dir, IdleTimeout: -1, Logger: quiet(t)})
	t.Cleanup(func() { stop(); wait(t, done, testwait.Deadline) })
	dial(t, dir)
	calls := openCalls(t, dir)
	as := func(family string) *wire.EngineConn {
		tok, _ := begin(t, calls, caller.Caller{Principal: "ai:a", Session: "s", Family: family, Scope: caller.AllNamespaces}, os.Getpid()) // in flight for the whole test
		c, err := wire.DialEngineAt(SocketPath(dir), grpc.WithPerRPCCredentials(staticCreds(tok)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	notes, other, core := as("notes"), as("other"), as("core")
	ctx := storagetest.Operator()

	own, err := notes.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
		Title: "todo: ship kiwi", Content: "open kiwi", Namespace: "_family/notes", Tier: "long"}})
	if err != nil {
		t.Fatalf("family storing in its own keyspace: %v", err)
	}
	id := own.GetMemory().GetId()
	got, err := notes.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}})
	if err != nil || len(got.GetMemories()) != 1 {
		t.Fatalf("family reading its own keyspace: %v %v", got, err)
	}
	listed, err := notes.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10, Filter: &aimemoryv1.Filter{Namespace: "_family/notes"}})
	if err != nil || len(listed.GetMemories()) != 1 {
		t.Fatalf("family listing its own keyspace: %v %v", listed, err)
	}
	plain, err := core.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "plain", Content: "kiwi plain", Tier: "long"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notes.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: id, TargetId: plain.GetMemory().GetId(), Relation: "related_to"}); err != nil {
		t.Fatalf("family linking its state to a memory: %v", err)
	}

	for name, c := range map[string]*wire.EngineConn{"other": other, "core": core} {
		got, err := c.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}})
		if err == nil && len(got.GetMemories()) != 0 {
			t.Errorf("%s read notes' state: %v", name, got)
		}
		listed, err := c.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10, Filter: &aimemoryv1.Filter{Namespace: "_family/notes"}})
		if err != nil || len(listed.GetMemories()) != 0 {
			t.Errorf("%s listed notes' keyspace: %v %v", name, listed, err)
		}
		all, err := c.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 10})
		if err != nil || len(all.GetMemories()) != 1 {
			t.Errorf("%s list of everything: %v %v, want only the plain memory", name, all, err)
		}
		found, err := c.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "kiwi", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range found.GetResults() {
			if r.GetMemory().GetNamespace() == "_family/notes" {
				t.Errorf("%s found notes' state by search", name)
			}
		}
		_, err = c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
			Title: "todo: ship kiwi", Content: "overwritten", Namespace: "_family/notes", Tier: "long"}})
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s writing notes' keyspace: %v, want PermissionDenied", name, err)
		}
		_, err = c.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{id}})
		if err == nil {
			if again, _ := notes.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}}); len(again.GetMemories()) != 1 {
				t.Errorf("%s deleted notes' state", name)
			}
		}
	}
	// A family's name is not a prefix of another's keyspace.
	_, err = as("note").StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
		Title: "x", Content: "x", Namespace: "_family/notes", Tier: "long"}})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("family note writing notes' keyspace: %v, want PermissionDenied", err)
	}
}
