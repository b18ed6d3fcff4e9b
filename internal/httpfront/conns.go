package httpfront

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// limitListener bounds the connections open at once: beyond the bound, the
// next accepted connection waits for a slot before it is served, and the
// ones after it wait in the kernel's backlog, so a flood of idle
// connections cannot exhaust file descriptors or memory.
type limitListener struct {
	net.Listener
	slots   chan struct{}
	closed  chan struct{}
	once    sync.Once
	framing bool        // follow each connection's requests (plain HTTP only)
	full    func(n int) // called when a connection has to wait for a slot
}

func newLimitListener(l net.Listener, max int, framing bool, full func(int)) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, max), closed: make(chan struct{}), framing: framing, full: full}
}

func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		l.full(cap(l.slots))
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
	fc := &conn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}
	if l.framing {
		fc.framing = &framing{}
	}
	return fc, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// open is the number of connections open now.
func (l *limitListener) open() int { return len(l.slots) }

// conn is an accepted connection: closing it frees its slot, and on plain
// HTTP its request stream is followed for framing that smuggles.
type conn struct {
	net.Conn
	release func()
	framing *framing
	bad     atomic.Bool // a request on it had both Content-Length and Transfer-Encoding
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.framing != nil && n > 0 && !c.bad.Load() && c.framing.follow(p[:n]) {
		c.bad.Store(true)
	}
	return n, err
}

func (c *conn) Close() error {
	c.release()
	return c.Conn.Close()
}

type connKey struct{}

// connOf is the front's connection a request came on (nil over TLS, where
// the server sees the TLS connection instead).
func connOf(ctx context.Context) *conn {
	c, _ := ctx.Value(connKey{}).(*conn)
	return c
}
