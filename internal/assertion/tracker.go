package assertion

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Tracker is a host's side of its call session with the engine
// (aimemoryv1.Calls/Track): it signs each tool call's assertion with the
// session, the call's number and the pid of the plugin process it is sent
// to, and reports each call that ended, without waiting for the engine.
// One rule makes the asynchronous report safe: a plugin process begins a
// call for someone only once the engine has applied the end of every call
// it was handed for anyone else (a sync on the stream, paid only when the
// principal changes), so no assertion of another principal is alive in it.
type Tracker struct {
	s *Signer

	mu      sync.Mutex
	session string // the open session; "" while there is none
	gen     uint64 // counts sessions, so an end from an old one is dropped
	next    uint64 // the last call number handed out in this session
	pending []uint64
	ended   uint64                  // calls of this session reported ended
	synced  uint64                  // of those, how many the engine applied for sure
	wanted  uint64                  // the most a Begin waits to see synced
	lastEnd map[int]map[whom]uint64 // pid → caller → the ended count at its last end
	changed chan struct{}           // closed (and replaced) when session or synced change
	wake    chan struct{}           // has a value when there is something to send
}

// whom is who a call is for, as far as assertions go.
type whom struct{ principal, session, scope string }

func whomOf(c caller.Caller) whom { return whom{c.Principal, c.Session, c.Scope} }

// NewTracker returns a tracker signing with s; Serve opens its sessions.
func NewTracker(s *Signer) *Tracker {
	return &Tracker{s: s, changed: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// ErrNoSession: the engine connection broke and the call could not wait
// for the next session.
var ErrNoSession = errors.New("no call session with the engine")

// Begin signs the assertion of one tool call of c, to be presented by the
// plugin process pid until deadline at the latest, and returns end, which
// reports the call ended (call it once, when the plugin answered or the
// call was given up). It waits, within ctx, for an open session and, if
// pid was handed calls for someone else, for their ends to be applied.
func (t *Tracker) Begin(ctx context.Context, c caller.Caller, pid int, deadline time.Time) (token []byte, end func(), err error) {
	who := whomOf(c)
	t.mu.Lock()
	for {
		need := uint64(0)
		for w, n := range t.lastEnd[pid] {
			if w != who {
				need = max(need, n)
			}
		}
		if t.session != "" && t.synced >= need {
			break
		}
		if need > t.wanted {
			t.wanted = need
			t.poke()
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, errors.Join(ErrNoSession, ctx.Err())
		}
		t.mu.Lock()
	}
	t.next++
	call, gen, session := t.next, t.gen, t.session
	t.mu.Unlock()
	token = t.s.sign(static{Principal: c.Principal, Session: c.Session, Family: c.Family, Scope: c.Scope, PID: pid, Calls: session}, call, deadline.UnixNano())
	return token, func() { t.end(gen, call, pid, who) }, nil
}

func (t *Tracker) end(gen, call uint64, pid int, who whom) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if gen != t.gen || t.session == "" {
		return // its session is gone, and every assertion of it with it
	}
	t.pending = append(t.pending, call)
	t.ended++
	if t.lastEnd[pid] == nil {
		t.lastEnd[pid] = map[whom]uint64{}
	}
	t.lastEnd[pid][who] = t.ended
	t.poke()
}

// poke wakes the sender; t.mu is held.
func (t *Tracker) poke() {
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
	t.session, t.next, t.pending, t.ended, t.synced, t.wanted = first.GetSession(), 0, nil, 0, 0, 0
	t.lastEnd = map[int]map[whom]uint64{}
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
		if s := resp.GetSynced(); s > t.synced {
			t.synced = s
			t.forgetSyncedLocked()
			t.notifyLocked()
		}
		t.mu.Unlock()
	}
}

// forgetSyncedLocked drops the ends the engine has applied: no Begin
// waits for them any more.
func (t *Tracker) forgetSyncedLocked() {
	for pid, whos := range t.lastEnd {
		for w, n := range whos {
			if n <= t.synced {
				delete(whos, w)
			}
		}
		if len(whos) == 0 {
			delete(t.lastEnd, pid)
		}
	}
}

// send writes the ended calls to the stream as they come, in batches, and
// asks for a sync when a Begin waits for one.
func (t *Tracker) send(stream aimemoryv1.Calls_TrackClient, done <-chan struct{}) {
	var asked uint64
	for {
		select {
		case <-t.wake:
		case <-done:
			return
		}
		t.mu.Lock()
		req := &aimemoryv1.TrackRequest{Ended: t.pending}
		t.pending = nil
		if t.wanted > asked && t.wanted > t.synced {
			req.Sync, asked = t.ended, t.ended // every end reported so far is in this or an earlier request
		}
		t.mu.Unlock()
		if len(req.Ended) == 0 && req.Sync == 0 {
			continue
		}
		if stream.Send(req) != nil {
			return
		}
	}
}
