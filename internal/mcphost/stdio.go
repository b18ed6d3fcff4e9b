package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxInFlight bounds the messages handled at once on one pipe; the reader
// waits for a free slot, so a flood of requests holds at most this many
// maximum-size messages in memory.
const maxInFlight = 16

// stopGrace is how long a signalled host waits for cancelled calls to
// answer before it returns anyway.
const stopGrace = 2 * time.Second

// ServeStdio speaks MCP on in/out. It returns when in ends (after the calls
// in flight have answered) or, promptly, when ctx is cancelled (SIGTERM,
// SIGINT), even if in stays open.
//
// One goroutine reads: it bounds each message (Options.MaxMessageBytes),
// decodes its envelope and hands it to a handler goroutine, and never
// writes or waits on anything but a free slot. Calls run concurrently,
// except that a message which may grant a family (or initialize) is a
// barrier: what was read after it waits for it, so an expansion and a call
// of the expanded tool sent back to back work.
func (h *Host) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	sess := newStdioSession()
	if err := h.srv.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register stdio session: %w", err)
	}
	defer h.srv.UnregisterSession(context.WithoutCancel(ctx), sess.SessionID())
	ctx = h.srv.WithContext(ctx, sess)
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	f := &stdioFront{h: h, w: &lineWriter{w: out, h: h}, slots: make(chan struct{}, maxInFlight)}
	go f.forwardNotifications(ctx, sess)
	readErr := make(chan error, 1)
	go func() { readErr <- f.read(ctx, in) }()

	select {
	case err := <-readErr:
		f.inFlight.Wait() // in ended: let every call answer
		if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case <-ctx.Done():
		stop()
		f.close()
		f.waitAtMost(stopGrace)
		return nil
	}
}

type stdioFront struct {
	h        *Host
	w        *lineWriter
	slots    chan struct{}
	inFlight sync.WaitGroup
	barrier  chan struct{} // closed when the latest barrier message is done; reader-owned
	released atomic.Int64  // when memory was last returned to the OS (unix ns)

	mu     sync.Mutex // orders spawns before the final wait
	closed bool
}

// close stops new handlers, so the wait for those in flight is final.
func (f *stdioFront) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

// releaseMemory hands the heap an oversized message grew back to the OS
// (at most once a second), so a hostile line leaves no lasting footprint;
// the runtime would otherwise keep it until its next forced collection.
func (f *stdioFront) releaseMemory() {
	now, last := time.Now().UnixNano(), f.released.Load()
	if now-last < int64(time.Second) || !f.released.CompareAndSwap(last, now) {
		return
	}
	debug.FreeOSMemory()
}

// read is the reader goroutine.
func (f *stdioFront) read(ctx context.Context, in io.Reader) error {
	lines := newLineReader(in, f.h.opts.MaxMessageBytes)
	for {
		line, over, err := lines.next()
		switch {
		case err != nil:
			return err
		case over != nil:
			limit := f.h.opts.MaxMessageBytes
			resp := errorResponse(over.id, mcp.INVALID_REQUEST, fmt.Sprintf(
				"message of %d bytes is over the limit of %d bytes ([mcp] max_message_bytes in config.toml); it was not read",
				over.size, limit), map[string]any{"limit": limit, "size": over.size})
			if !f.spawn(ctx, nil, func() {
				f.h.log.Warn("message over the size limit dropped", "bytes", over.size, "limit", limit)
				f.releaseMemory()
				f.w.send(resp)
			}) {
				return ctx.Err()
			}
		default:
			if !f.dispatch(ctx, line) {
				return ctx.Err()
			}
		}
	}
}

// dispatch hands one message to a handler goroutine; false once ctx ended.
func (f *stdioFront) dispatch(ctx context.Context, line []byte) bool {
	env, err := decodeEnvelope(line)
	if err != nil {
		if resp, deep := tooDeepAnswer(line); deep {
			return f.spawn(ctx, nil, func() { f.w.send(resp) })
		}
		code, msg := mcp.PARSE_ERROR, "Parse error: the message is not valid JSON"
		if json.Valid(line) {
			code, msg = mcp.INVALID_REQUEST, "Invalid Request: a message must be one JSON-RPC object"
		}
		return f.spawn(ctx, nil, func() { f.w.send(errorResponse(nil, code, msg, nil)) })
	}
	switch {
	case env.Method == "" && (env.Result != nil || env.Error != nil):
		return true // an answer to a server request; this host sends none
	case env.Method == "":
		var id json.RawMessage
		if validID(env.ID) {
			id = env.ID
		}
		return f.spawn(ctx, nil, func() {
			f.w.send(errorResponse(id, mcp.INVALID_REQUEST, "Invalid Request: method is missing or not a string", nil))
		})
	case !env.isRequest():
		// Notifications (cancellations among them) never queue behind a barrier.
		return f.spawn(ctx, nil, func() { f.h.handle(ctx, &env, line) })
	}
	after := f.barrier
	var done chan struct{}
	callCtx := ctx
	if f.h.ordersAfter(ctx, &env, line) {
		done = make(chan struct{})
		f.barrier = done
		// An expansion releases what follows once its tools are registered,
		// before it waits for the client's new tool list (relist.go).
		callCtx = withRelease(ctx, sync.OnceFunc(func() { close(done) }))
	}
	listing := env.Method == string(mcp.MethodToolsList)
	return f.spawn(ctx, env.ID, func() {
		if done != nil {
			defer releaseOrder(callCtx)
		}
		if after != nil {
			select {
			case <-after:
			case <-ctx.Done():
				return
			}
		}
		var version uint64
		if listing {
			version = f.h.ToolsVersion()
		}
		if resp := f.h.handle(callCtx, &env, line); resp != nil {
			f.w.send(resp)
			if listing {
				f.h.ListAnswered(stdioSessionID, version)
			}
		}
	})
}

// spawn runs fn on its own goroutine once a slot is free; false if ctx
// ended first. A panic becomes an internal-error answer to id.
func (f *stdioFront) spawn(ctx context.Context, id json.RawMessage, fn func()) bool {
	select {
	case f.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		<-f.slots
		return false
	}
	f.inFlight.Add(1)
	f.mu.Unlock()
	task := func() {
		defer f.inFlight.Done()
		defer func() { <-f.slots }()
		defer func() {
			if r := recover(); r != nil {
				f.h.log.Error("message handler panicked", "panic", r)
				if id != nil {
					f.w.send(errorResponse(id, mcp.INTERNAL_ERROR, "internal error", nil))
				}
			}
		}()
		fn()
	}
	go task()
	return true
}

func (f *stdioFront) waitAtMost(d time.Duration) {
	done := make(chan struct{})
	go func() { f.inFlight.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		f.h.log.Warn("stopping with calls still running", "after", d)
	}
}

func (f *stdioFront) forwardNotifications(ctx context.Context, sess *stdioSession) {
	for {
		select {
		case n := <-sess.notifications:
			f.w.send(n)
		case <-ctx.Done():
			return
		}
	}
}

func errorResponse(id json.RawMessage, code int, msg string, data any) mcp.JSONRPCMessage {
	var rid mcp.RequestId
	if id != nil {
		rid = mcp.NewRequestId(id)
	}
	return mcp.JSONRPCError{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      rid,
		Error:   mcp.JSONRPCErrorDetails{Code: code, Message: msg, Data: data},
	}
}

// lineWriter writes whole JSON lines, one at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
	h  *Host
}

func (l *lineWriter) send(msg any) {
	b, ok := msg.(rawLine) // encoded already (the direct path)
	if !ok {
		var err error
		if b, err = json.Marshal(msg); err != nil {
			l.h.log.Error("response not encodable", "err", err)
			return
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(append(b, '\n')); err != nil {
		l.h.log.Warn("stdout write failed", "err", err)
	}
}
