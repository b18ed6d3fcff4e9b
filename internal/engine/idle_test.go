package engine

import (
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/stats"
)

// fakeClock records armed timers; the test fires them by hand.
type fakeClock struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool { t.stopped = true; return true }

func (c *fakeClock) after(_ time.Duration, f func()) stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{f: f}
	c.timers = append(c.timers, t)
	return t
}

// fireAll runs every armed, unstopped timer (as if the timeout passed).
func (c *fakeClock) fireAll() {
	c.mu.Lock()
	ts := append([]*fakeTimer(nil), c.timers...)
	c.mu.Unlock()
	for _, t := range ts {
		if !t.stopped {
			t.f()
		}
	}
}

func isIdle(c *connTracker) bool {
	select {
	case <-c.idle():
		return true
	default:
		return false
	}
}

func TestIdleWaitsForBackgroundWork(t *testing.T) {
	clock := &fakeClock{}
	c := newConnTrackerWith(time.Minute, clock.after)
	release := c.Hold() // say, a webhook retry queued before any host connected
	clock.fireAll()
	if isIdle(c) {
		t.Fatal("engine went idle with background work queued")
	}
	// A host comes and goes; the work is still queued.
	c.HandleConn(nil, &stats.ConnBegin{})
	c.HandleConn(nil, &stats.ConnEnd{})
	clock.fireAll()
	if isIdle(c) {
		t.Fatal("engine went idle after its last client left, with work still queued")
	}
	release()
	release() // twice is harmless
	if isIdle(c) {
		t.Fatal("idle before the timeout passed")
	}
	clock.fireAll()
	if !isIdle(c) {
		t.Fatal("engine did not go idle once the work was done and the timeout passed")
	}
}

func TestIdleNotWhileConnected(t *testing.T) {
	clock := &fakeClock{}
	c := newConnTrackerWith(time.Minute, clock.after)
	c.HandleConn(nil, &stats.ConnBegin{})
	clock.fireAll()
	if isIdle(c) {
		t.Fatal("idle with a client connected")
	}
	c.HandleConn(nil, &stats.ConnEnd{})
	clock.fireAll()
	if !isIdle(c) {
		t.Fatal("not idle after the last client left and the timeout passed")
	}
}
