package storagetest

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func testValidationNamesField(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	existing := Store(t, s, Mem("exists", "x"))
	storeCases := []struct {
		field string
		m     *aimemoryv1.Memory
	}{
		{"memory", nil},
		{"title", Mem("  ", "x")},
		{"title", Mem(strings.Repeat("é", 513), "x")},
		{"content", Mem("t", "line\r\n")},
		{"content", Mem("t", strings.Repeat("x", 65537))},
		{"namespace", Mem("t", "x", InNS("a//b"))},
		{"namespace", Mem("t", "x", InNS("/a"))},
		{"tags", Mem("t", "x", Tags(make([]string, 51)...))},
		{"tags[1]", Mem("t", "x", Tags("ok", " "))},
		{"priority", Mem("t", "x", prio(11))},
		{"priority", Mem("t", "x", prio(-1))},
		{"confidence", Mem("t", "x", func(m *aimemoryv1.Memory) { m.Confidence = 1.5 })},
		{"source", Mem("t", "x", func(m *aimemoryv1.Memory) { m.Source = "bogus" })},
		{"tier", Mem("t", "x", Tier("forever"))},
		{"metadata", Mem("t", "x", meta(`[]`))},
		{"metadata", Mem("t", "x", meta(`{bad`))},
		{"metadata.agent_id", Mem("t", "x", meta(`{"agent_id":"has space"}`))},
		{"metadata.agent_id", Mem("t", "x", meta(`{"agent_id":7}`))},
		{"scope", Mem("t", "x", meta(`{"scope":"world"}`))},
	}
	for _, tc := range storeCases {
		_, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: tc.m})
		var fe *record.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("store %s: err = %v", tc.field, err)
		}
	}
	if _, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("t", "x"), OnConflict: 9}); err == nil {
		t.Error("unknown on_conflict accepted")
	}

	updateCases := []struct {
		field string
		req   *aimemoryv1.UpdateMemoryRequest
	}{
		{"id", &aimemoryv1.UpdateMemoryRequest{}},
		{"title", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, Title: proto.String("")}},
		{"content", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, Content: proto.String("a\x00b")}},
		{"tier", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, Tier: proto.String("Long")}},
		{"namespace", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, Namespace: proto.String("a/../b")}},
		{"tags[0]", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, SetTags: true, Tags: []string{""}}},
		{"tags", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, Tags: []string{"no set_tags"}}},
		{"priority", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, Priority: proto.Int32(0)}},
		{"confidence", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, Confidence: proto.Float64(-0.1)}},
		{"metadata", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, MetadataJson: []byte(`"str"`)}},
		{"expires_at", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, ExpiresAt: proto.Int64(-5)}},
		{"expires_at", &aimemoryv1.UpdateMemoryRequest{Id: existing.Id, ExpiresAt: proto.Int64(5), ClearExpiresAt: true}},
	}
	for _, tc := range updateCases {
		_, err := s.UpdateMemory(ctx, tc.req)
		var fe *record.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("update %s: err = %v", tc.field, err)
		}
	}
	for name, call := range map[string]func() error{
		"get": func() error {
			_, err := s.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{"ok", ""}})
			return err
		},
		"delete": func() error {
			_, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{"bad\nid"}})
			return err
		},
		"list": func() error {
			_, err := s.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Filter: &aimemoryv1.Filter{Tier: "x"}})
			return err
		},
		"search": func() error {
			_, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "x", Filter: &aimemoryv1.Filter{AsAgent: "a b"}}, nil)
			return err
		},
		"match": func() error {
			_, err := s.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "x", Match: 7}, nil)
			return err
		},
	} {
		var fe *record.FieldError
		if err := call(); !errors.As(err, &fe) {
			t.Errorf("%s: err = %v, want a field error", name, err)
		}
	}
	if get(t, s, existing.Id).Title != "exists" {
		t.Error("a rejected update changed the memory")
	}
}
