package supervisor

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// maxIdleStreams is how many idle call streams an instance keeps: as many
// as calls were recently in flight at once, up to this; more are closed.
const maxIdleStreams = 16

// callStreams are an instance's open CallStream streams, each carrying one
// call at a time: a call takes an idle one (or opens one), sends its
// request and reads its answer on its own goroutine, with no hand-off, and
// gives the stream back. A unary call costs a new HTTP/2 stream, headers
// and a server goroutine hand-off each time; a round trip on an open
// stream about half of it (BenchmarkHop in sdk).
type callStreams struct {
	family aimemoryv1.FamilyClient
	mu     sync.Mutex
	idle   []*callStream
}

type callStream struct {
	st     aimemoryv1.Family_CallStreamClient
	cancel context.CancelFunc // ends the stream, and so the plugin's call on it
}

// call runs req on a stream. ctx carries the call's deadline, which
// travels in the request; when it ends, the stream is cancelled and never
// reused. A cancel of caller (the client's) is told to the plugin on the
// stream instead, and the call waits for its answer: a plugin stops a call
// only before it hands a write to the engine (sdk/wire/cancel.go), so the
// answer says what happened. A stream that carried a cancel is not reused.
func (p *callStreams) call(ctx, caller context.Context, req *aimemoryv1.CallRequest) (*aimemoryv1.CallResponse, error) {
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d).Microseconds()
		if left <= 0 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		req.TimeoutMicros = left
	}
	cs, err := p.take()
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, cs.cancel)
	err = cs.st.Send(req)
	if err == nil || errors.Is(err, io.EOF) { // io.EOF: the stream's status comes with Recv
		tell := context.AfterFunc(caller, func() { cs.st.Send(&aimemoryv1.CallRequest{Cancel: true}) })
		var resp *aimemoryv1.CallResponse
		resp, err = cs.st.Recv()
		untold := tell()
		if err == nil {
			if stop() && untold {
				p.put(cs)
			} else {
				cs.cancel()
			}
			return resp, nil
		}
	}
	stop()
	cs.cancel()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, err
}

func (p *callStreams) take() (*callStream, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		cs := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return cs, nil
	}
	p.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := p.family.CallStream(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	return &callStream{st: st, cancel: cancel}, nil
}

func (p *callStreams) put(cs *callStream) {
	p.mu.Lock()
	if len(p.idle) < maxIdleStreams {
		p.idle = append(p.idle, cs)
		cs = nil
	}
	p.mu.Unlock()
	if cs != nil {
		cs.cancel()
	}
}
