package events

import (
	"testing"

	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestSlowSubscriberDropsInsteadOfBlocking(t *testing.T) {
	var b Broadcaster
	fast, slow := b.Subscribe(10), b.Subscribe(2)
	for i := range 5 {
		b.Publish(&aimemoryv1.Event{At: int64(i)}) // must not block on slow
	}
	if len(fast.C) != 5 || len(slow.C) != 2 || slow.Dropped() != 3 || fast.Dropped() != 0 {
		t.Errorf("fast %d (dropped %d), slow %d (dropped %d)", len(fast.C), fast.Dropped(), len(slow.C), slow.Dropped())
	}
	slow.Close()
	slow.Close()
	if b.Subscribers() != 1 {
		t.Errorf("subscribers %d", b.Subscribers())
	}
	b.Publish(&aimemoryv1.Event{}) // after a close: no send on a closed channel
	if e := testwait.Recv(t, fast.C, "the first event"); e.At != 0 {
		t.Errorf("order: first event at %d", e.At)
	}
}
