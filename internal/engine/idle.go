package engine

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/stats"
)

// connTracker counts live client connections (a gRPC stats handler) and
// queued background work, and reports when there has been neither for the
// idle timeout: an engine with webhook retries, an embedding backfill or a
// scheduled purge queued stays up though every host has gone.
type connTracker struct {
	timeout time.Duration

	mu    sync.Mutex
	conns int
	work  int                                 // background work held (Hold)
	after func(time.Duration, func()) stopper // time.AfterFunc; tests inject a clock
	timer stopper
	gen   int // which arming may fire: a stopped timer's late callback must not
	fired chan struct{}
}

// stopper is the part of *time.Timer the tracker uses.
type stopper interface{ Stop() bool }

func newConnTracker(timeout time.Duration) *connTracker {
	return newConnTrackerWith(timeout, func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) })
}

func newConnTrackerWith(timeout time.Duration, after func(time.Duration, func()) stopper) *connTracker {
	c := &connTracker{timeout: timeout, fired: make(chan struct{}), after: after}
	c.mu.Lock()
	c.armLocked() // no client yet: the countdown starts now
	c.mu.Unlock()
	return c
}

// idle is closed once the engine has had no client for the timeout.
func (c *connTracker) idle() <-chan struct{} { return c.fired }

func (c *connTracker) armLocked() {
	if c.timeout < 0 {
		return
	}
	c.gen++
	gen := c.gen
	c.timer = c.after(c.timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if gen == c.gen && c.conns == 0 && c.work == 0 {
			close(c.fired)
		}
	})
}

func (c *connTracker) HandleConn(_ context.Context, s stats.ConnStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.fired:
		return // shutting down
	default:
	}
	switch s.(type) {
	case *stats.ConnBegin:
		c.conns++
		c.disarmLocked()
	case *stats.ConnEnd:
		c.conns--
		c.rearmLocked()
	}
}

// Hold keeps the engine from exiting for idleness until release is called
// (once; later calls do nothing). It is how background work says it is queued.
func (c *connTracker) Hold() (release func()) {
	c.mu.Lock()
	c.work++
	c.disarmLocked()
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.work--
			c.rearmLocked()
			c.mu.Unlock()
		})
	}
}

func (c *connTracker) disarmLocked() {
	c.gen++ // even if the timer is firing right now
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

func (c *connTracker) rearmLocked() {
	if c.conns == 0 && c.work == 0 {
		c.armLocked()
	}
}

func (c *connTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *connTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c *connTracker) HandleRPC(context.Context, stats.RPCStats)                         {}
