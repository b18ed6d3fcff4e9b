// Package events fans committed writes out to in-process subscribers (the
// WatchEvents stream today; webhooks and subscriptions later). Publishing
// never blocks: a subscriber that falls behind loses events, and the loss is
// counted so it can be reported.
package events

import (
	"sync"
	"sync/atomic"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// DefaultBuffer is how many events a subscriber may lag before losing any.
const DefaultBuffer = 1024

// Broadcaster delivers each published event to every current subscriber.
// The zero value is ready to use.
type Broadcaster struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// Subscription receives events on C until Close.
type Subscription struct {
	C       <-chan *aimemoryv1.Event
	c       chan *aimemoryv1.Event
	b       *Broadcaster
	dropped atomic.Uint64
	once    sync.Once
}

// Subscribe starts a subscription with room for buffer pending events
// (DefaultBuffer when buffer ≤ 0).
func (b *Broadcaster) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	c := make(chan *aimemoryv1.Event, buffer)
	s := &Subscription{C: c, c: c, b: b}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[*Subscription]struct{})
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Publish hands e to every subscriber without waiting for any of them.
func (b *Broadcaster) Publish(e *aimemoryv1.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		select {
		case s.c <- e:
		default:
			s.dropped.Add(1)
		}
	}
}

// Dropped is the number of events this subscriber lost by lagging.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close ends the subscription and closes C. Safe to call more than once.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.b.mu.Lock()
		delete(s.b.subs, s)
		s.b.mu.Unlock()
		close(s.c)
	})
}

// Subscribers is the number of open subscriptions.
func (b *Broadcaster) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}
