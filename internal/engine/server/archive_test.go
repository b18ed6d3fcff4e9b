package server

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestArchiveRPCs: the Archive service over gRPC, with the storage errors
// mapped to status codes an agent-facing plugin can pass on.
func TestArchiveRPCs(t *testing.T) {
	ctx := storagetest.Operator()
	c, _ := newServer(t)
	store := func(title, ns string) string {
		r, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "draft notes", Namespace: ns, Confidence: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Memory.Id
	}
	a, b := store("a", "x"), store("b", "y")
	if _, err := c.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: a, TargetId: b}); err != nil {
		t.Fatal(err)
	}
	f, err := c.Forget(ctx, &aimemoryv1.ForgetRequest{Namespace: "x", Pattern: "notes draft"})
	if err != nil || f.Matched != 1 || f.Memories[0].Id != a {
		t.Fatalf("forget = %v, %v", f, err)
	}
	g, err := c.GetArchived(ctx, &aimemoryv1.GetArchivedRequest{Ids: []string{a, "nope"}})
	if err != nil || len(g.Archived) != 1 || g.Archived[0].Reason != "forget" || len(g.Links) != 1 || len(g.NotFound) != 1 {
		t.Fatalf("get archived = %v, %v", g, err)
	}
	r, err := c.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: a})
	if err != nil || r.LinksRestored != 1 || r.Memory.Id != a {
		t.Fatalf("restore = %v, %v", r, err)
	}
	deep := store("d", "locked/sub")
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"restore of a live memory", func() error {
			_, err := c.RestoreMemory(ctx, &aimemoryv1.RestoreMemoryRequest{Id: a})
			return err
		}, codes.NotFound, "memory not found in archive"},
		{"forget without criteria", func() error { _, err := c.Forget(ctx, &aimemoryv1.ForgetRequest{DryRun: true}); return err },
			codes.InvalidArgument, "namespace: at least one of namespace, pattern or tier is required"},
		{"forget of an unknown tier", func() error { _, err := c.Forget(ctx, &aimemoryv1.ForgetRequest{Tier: "all"}); return err },
			codes.InvalidArgument, "tier:"},
		{"promote into a denied ancestor", func() error {
			_, err := c.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: deep, ToNamespace: "locked"})
			return err
		}, codes.PermissionDenied, "promote denied by governance"},
		{"promote out of the hierarchy", func() error {
			_, err := c.PromoteMemory(ctx, &aimemoryv1.PromoteMemoryRequest{Id: deep, ToNamespace: "y"})
			return err
		}, codes.InvalidArgument, `to_namespace: "y" is not an ancestor`},
	} {
		err := tc.call()
		if s, _ := status.FromError(err); s.Code() != tc.code || !strings.HasPrefix(s.Message(), tc.msg) {
			t.Errorf("%s: %v, want %v %q", tc.name, err, tc.code, tc.msg)
		}
	}
}
