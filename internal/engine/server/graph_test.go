package server

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestGraphStatusCodes: graph rule breaks are InvalidArgument naming the
// field, missing memories NotFound, a taken alias AlreadyExists.
func TestGraphStatusCodes(t *testing.T) {
	c, ev := newServer(t)
	sub := ev.Subscribe(16)
	defer sub.Close()
	ctx := storagetest.Operator()
	a, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "a", Content: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "b", Content: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	aid, bid := a.Memory.Id, b.Memory.Id
	check := func(what string, err error, code codes.Code, msg string) {
		t.Helper()
		if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), msg) {
			t.Errorf("%s: %v, want %v containing %q", what, err, code, msg)
		}
	}
	_, err = c.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: aid, TargetId: bid, Relation: "likes"})
	check("bad relation", err, codes.InvalidArgument, "relation: must be one of")
	_, err = c.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: aid, TargetId: "ghost"})
	check("missing target", err, codes.NotFound, "target_id: memory not found: ghost")
	if _, err = c.PutLink(ctx, &aimemoryv1.PutLinkRequest{SourceId: aid, TargetId: bid}); err != nil {
		t.Fatal(err)
	}
	// A plugin built before invalidated_by was reserved may still send it
	// (field 5): it is skipped, however malformed; the verified caller is
	// recorded.
	req := &aimemoryv1.InvalidateLinkRequest{SourceId: aid, TargetId: bid, Relation: "related_to"}
	req.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 5, protowire.BytesType), "bad agent"))
	inv, err := c.InvalidateLink(ctx, req)
	if err != nil || inv.GetLink().GetInvalidatedBy() != "test" {
		t.Fatalf("invalidate: %v %v, want invalidated_by the caller %q", inv, err, "test")
	}
	_, err = c.LinkTimeline(ctx, &aimemoryv1.LinkTimelineRequest{SourceId: "ghost"})
	check("timeline of nothing", err, codes.NotFound, "source_id")
	_, err = c.GetLinks(ctx, &aimemoryv1.GetLinksRequest{Ids: []string{aid}, ObservedBy: &aimemoryv1.AgentSet{Ids: []string{""}}})
	check("bad observer", err, codes.InvalidArgument, "observed_by.ids[0]")
	if _, err = c.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "E", Namespace: "n", Aliases: []string{"e1"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.RegisterEntity(ctx, &aimemoryv1.RegisterEntityRequest{CanonicalName: "F", Namespace: "n", Aliases: []string{"E1"}})
	check("alias taken", err, codes.AlreadyExists, "aliases[0]")
	_, err = c.CountNamespaces(ctx, &aimemoryv1.CountNamespacesRequest{Prefix: "a//b"})
	check("bad prefix", err, codes.InvalidArgument, "prefix")

	// A link write is an event about its source.
	seen := map[string]bool{}
	for len(sub.C) > 0 {
		e := <-sub.C
		seen[e.Type+" "+e.MemoryId] = true
	}
	if !seen["memory_link_created "+aid] {
		t.Errorf("no memory_link_created event: %v", seen)
	}
}

// FuzzGraphRequests decodes arbitrary bytes as one of the graph requests
// (chosen by the first byte): the engine must answer every one with a
// result or a client error, never Internal, and never panic.
func FuzzGraphRequests(f *testing.F) {
	seeds := []proto.Message{
		&aimemoryv1.PutLinkRequest{SourceId: "a", TargetId: "b", Relation: "supersedes"},
		&aimemoryv1.InvalidateLinkRequest{SourceId: "a", TargetId: "b", Relation: "supersedes", ValidUntil: proto.Int64(5)},
		&aimemoryv1.GetLinksRequest{Ids: []string{"a"}, Relation: "contradicts", ValidAt: 7, ObservedBy: &aimemoryv1.AgentSet{Ids: []string{"ai:x"}}, IncludeNodes: true},
		&aimemoryv1.LinkTimelineRequest{SourceId: "a", Since: 1, Until: 2, Limit: 3},
		&aimemoryv1.RegisterEntityRequest{CanonicalName: "X", Namespace: "n", Aliases: []string{"y"}, MetadataJson: []byte(`{}`)},
		&aimemoryv1.GetEntityByAliasRequest{Alias: "y", Namespace: "n"},
		&aimemoryv1.CountNamespacesRequest{Prefix: "n", Limit: 2},
	}
	for i, m := range seeds {
		raw, _ := proto.Marshal(m)
		f.Add(append([]byte{byte(i)}, raw...))
	}
	ev := &events.Broadcaster{}
	bst, err := boltstore.Open(storagetest.Operator(), filepath.Join(f.TempDir(), "memory.db"), storage.Options{Events: ev})
	if err != nil {
		f.Fatal(err)
	}
	st := records.New(bst) // served as the engine serves it
	f.Cleanup(func() { st.Close() })
	mems := &Memories{st: st, errorMapper: errorMapper{log: slog.New(slog.DiscardHandler)}}
	srv := &Graph{st: st, errorMapper: mems.errorMapper}
	ctx := storagetest.Operator()
	// Memories "a" and "b" do not exist under those ids; seed real ones so
	// some requests reach the write paths.
	for _, title := range []string{"a", "b"} {
		if _, err := mems.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "x"}}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return
		}
		var err error
		switch raw[0] % 7 {
		case 0:
			req := &aimemoryv1.PutLinkRequest{}
			if proto.Unmarshal(raw[1:], req) == nil {
				_, err = srv.PutLink(ctx, req)
			}
		case 1:
			req := &aimemoryv1.InvalidateLinkRequest{}
			if proto.Unmarshal(raw[1:], req) == nil {
				_, err = srv.InvalidateLink(ctx, req)
			}
		case 2:
			req := &aimemoryv1.GetLinksRequest{}
			if proto.Unmarshal(raw[1:], req) == nil {
				_, err = srv.GetLinks(ctx, req)
			}
		case 3:
			req := &aimemoryv1.LinkTimelineRequest{}
			if proto.Unmarshal(raw[1:], req) == nil {
				_, err = srv.LinkTimeline(ctx, req)
			}
		case 4:
			req := &aimemoryv1.RegisterEntityRequest{}
			if proto.Unmarshal(raw[1:], req) == nil {
				_, err = srv.RegisterEntity(ctx, req)
			}
		case 5:
			req := &aimemoryv1.GetEntityByAliasRequest{}
			if proto.Unmarshal(raw[1:], req) == nil {
				_, err = srv.GetEntityByAlias(ctx, req)
			}
		case 6:
			req := &aimemoryv1.CountNamespacesRequest{}
			if proto.Unmarshal(raw[1:], req) == nil {
				_, err = srv.CountNamespaces(ctx, req)
			}
		}
		if code := status.Code(err); code == codes.Internal || code == codes.Unknown {
			t.Fatalf("request %x: %v", raw, err)
		}
	})
}
