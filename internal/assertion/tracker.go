package assertion

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Tracker is a host's side of its call session with the engine
// (aimemoryv1.Calls/Track): it signs each tool call's assertion with the
// session, the call's number and the pid of the plugin process it is sent
// to, and reports each call that ended. Before it begins a call it waits
// until the engine has retired every call that ended before, so no tool
// call starts while an assertion of an ended one is still accepted.
type Tracker struct {
	s *Signer

	mu      sync.Mutex
	session string // the open session; "" while there is none
	gen     uint64 // counts sessions, so an end from an old one is dropped
	next    uint64 // the last call number handed out in this session
	pending []uint64
	ended   uint64        // calls of this session reported ended (sent or pending)
	retired uint64        // of those, how many the engine retired
	changed chan struct{} // closed (and replaced) when session or retired change
	wake    chan struct{} // has a value when pending has calls to send
}

// NewTracker returns a tracker signing with s; Serve opens its sessions.
func NewTracker(s *Signer) *Tracker {
	return &Tracker{s: s, changed: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// ErrNoSession: the engine connection broke and the call could not wait
// for the next session.
var ErrNoSession = errors.New("no call session with the engine")

// Begin signs the assertion of one tool call of c, to be presented by the
// plugin process pid until deadline at the latest, and returns end, which
// reports the call ended (call it exactly once, when the plugin answered or
// the call was given up). It waits, within ctx, for an open session in
// which every call that ended before has been retired.
func (t *Tracker) Begin(ctx context.Context, c caller.Caller, pid int, deadline time.Time) (token []byte, end func(), err error) {
	t.mu.Lock()
	gen, need := t.gen, t.ended
	for t.session == "" || t.retired < need {
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, errors.Join(ErrNoSession, ctx.Err())
		}
		t.mu.Lock()
		if t.gen != gen { // a new session: nothing of the old one to wait for
			gen, need = t.gen, t.ended
		}
	}
	t.next++
	call := t.next
	token = t.s.sign(claims{Principal: c.Principal, Session: c.Session, Family: c.Family, Scope: c.Scope,
		PID: pid, Calls: t.session, Call: call, Expires: deadline.UnixNano()})
	t.mu.Unlock()
	return token, func() { t.end(gen, call) }, nil
}

func (t *Tracker) end(gen, call uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if gen != t.gen || t.session == "" {
		return // its session is gone, and every assertion of it with it
	}
	t.pending = append(t.pending, call)
	t.ended++
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// notifyLocked wakes every Begin waiting; t.mu is held.
func (t *Tracker) notifyLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// Serve runs one session on an open Track stream: it reads the session id,
// calls opened, then reports ended calls until the stream breaks, which
// ends the session (its assertions are refused from then on).
func (t *Tracker) Serve(stream aimemoryv1.Calls_TrackClient, opened func()) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	if first.GetSession() == "" {
		return errors.New("engine opened a call session without an id")
	}
	t.mu.Lock()
	t.gen++
	t.session, t.next, t.pending, t.ended, t.retired = first.GetSession(), 0, nil, 0, 0
	t.notifyLocked()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.session = ""
		t.notifyLocked()
		t.mu.Unlock()
	}()
	opened()

	done := make(chan struct{})
	defer close(done)
	go t.send(stream, done) // a failed send breaks the stream, and Recv says so
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		t.mu.Lock()
		if r := resp.GetRetired(); r > t.retired {
			t.retired = r
			t.notifyLocked()
		}
		t.mu.Unlock()
	}
}

// send writes the ended calls to the stream as they come, in batches.
func (t *Tracker) send(stream aimemoryv1.Calls_TrackClient, done <-chan struct{}) {
	for {
		select {
		case <-t.wake:
		case <-done:
			return
		}
		t.mu.Lock()
		batch := t.pending
		t.pending = nil
		t.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		if stream.Send(&aimemoryv1.TrackRequest{Ended: batch}) != nil {
			return
		}
	}
}
