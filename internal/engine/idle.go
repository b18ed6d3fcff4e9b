package engine

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/stats"
)

// connTracker counts live client connections (a gRPC stats handler) and
// reports when there has been none for the idle timeout.
type connTracker struct {
	timeout time.Duration

	mu    sync.Mutex
	conns int
	timer *time.Timer
	gen   int // which arming may fire: a stopped timer's late callback must not
	fired chan struct{}
}

func newConnTracker(timeout time.Duration) *connTracker {
	c := &connTracker{timeout: timeout, fired: make(chan struct{})}
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
	c.timer = time.AfterFunc(c.timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if gen == c.gen && c.conns == 0 {
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
		c.gen++ // disarm, even if the timer is firing right now
		if c.timer != nil {
			c.timer.Stop()
			c.timer = nil
		}
	case *stats.ConnEnd:
		c.conns--
		if c.conns == 0 {
			c.armLocked()
		}
	}
}

func (c *connTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *connTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c *connTracker) HandleRPC(context.Context, stats.RPCStats)                         {}
