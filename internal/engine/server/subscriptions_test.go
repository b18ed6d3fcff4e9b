package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// A watcher that resumes from a cursor gets the logged events after it,
// then live ones, with no gap and no repeat.
func TestWatchEventsResumes(t *testing.T) {
	c, ev := newServer(t)
	ctx, cancel := context.WithTimeout(storagetest.Operator(), 10*time.Second)
	defer cancel()
	var ids []string
	for _, title := range []string{"a", "b", "c"} {
		r, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetMemory().GetId())
	}
	stream, err := c.WatchEvents(ctx, &aimemoryv1.WatchEventsRequest{Resume: true, AfterSeq: 1})
	if err != nil {
		t.Fatal(err)
	}
	for want := uint64(2); want <= 3; want++ {
		e, err := stream.Recv()
		if err != nil || e.GetSeq() != want || e.GetMemoryId() != ids[want-1] {
			t.Fatalf("replayed %v, %v; want seq %d", e, err, want)
		}
	}
	waitForWatcher(t, ev)
	r, err := c.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "d", Content: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := stream.Recv(); err != nil || e.GetSeq() != 4 || e.GetMemoryId() != r.GetMemory().GetId() {
		t.Fatalf("live %v, %v; want seq 4", e, err)
	}
}

func TestSubscribeNeverReturnsTheSecret(t *testing.T) {
	dir := t.TempDir()
	ev := &events.Broadcaster{}
	bst, err := boltstore.Open(storagetest.Operator(), filepath.Join(dir, "memory.db"), storage.Options{Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	st := records.New(bst) // served as the engine serves it
	t.Cleanup(func() { st.Close() })
	sealer, err := webhook.OpenSealer(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, Config{Backend: st, Events: ev, Webhooks: Webhooks{Sealer: sealer}})
	ctx := storagetest.Operator()
	resp, err := c.Subscribe(ctx, &aimemoryv1.SubscribeRequest{Url: "https://hooks.example.com/x", Secret: "topsecret", Events: []string{"memory_store", "memory_store"}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListSubscriptions(ctx, &aimemoryv1.ListSubscriptionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{resp.String(), list.String()} {
		if strings.Contains(text, "topsecret") {
			t.Fatalf("secret returned: %s", text)
		}
	}
	sub := list.GetSubscriptions()[0]
	if !sub.GetSigned() || sub.GetCreatedBy() != "test" || len(sub.GetEvents()) != 1 {
		t.Fatalf("subscription %v", sub)
	}
	stored, _ := st.ListSubscriptions(ctx)
	if secret, err := sealer.Open(stored[0].ID, stored[0].SealedSecret); err != nil || string(secret) != "topsecret" {
		t.Fatalf("sealed secret opens to %q, %v", secret, err)
	}
	// The URL guard applies to the API, not only to the tool.
	if _, err := c.Subscribe(ctx, &aimemoryv1.SubscribeRequest{Url: "https://192.168.0.1/x"}); err == nil || !strings.Contains(err.Error(), "private") {
		t.Fatalf("private target: %v", err)
	}
}
