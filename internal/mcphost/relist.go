package mcphost

import (
	"context"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// An expansion changes the tool list; the client learns it from
// notifications/tools/list_changed and fetches the list again. Real
// harnesses build their next model request as soon as the expansion's
// result arrives, and a result sent before the client had acted on its
// new list reached the model one request late (Claude Code, Gemini CLI).
// So the answer to an expansion waits for two things, each bounded by
// RelistWait:
//
//  1. the client is answered a tools/list that holds the new tools;
//  2. the host then sends list_changed once more and waits for the
//     client's next tools/list. A client that refreshes one list at a time
//     (Gemini CLI 0.61 re-reads its context files before it updates the
//     tools of its next request, and queues a notification that arrives
//     meanwhile) sends it only once it has acted on the first; a client
//     that acts on the list at once (Claude Code) sends it at once.
//
// A client that never fetches the list after list_changed loses RelistWait
// once per session: after a first wait runs out, its session is not waited
// for again until it lists.

// DefaultRelistWait bounds each of the two waits.
const DefaultRelistWait = 500 * time.Millisecond

// listings tracks, per session, what the client was last listed.
type listings struct {
	mu       sync.Mutex
	sessions map[string]*listing
}

type listing struct {
	answered uint64        // the highest tools version answered to this session
	lists    uint64        // tools/list answers written to this session
	changed  chan struct{} // closed and replaced at every answer
	deaf     bool          // a first wait ran out: this client does not re-list
}

// get returns session's listing; the caller holds l.mu.
func (l *listings) get(session string) *listing {
	if l.sessions == nil {
		l.sessions = map[string]*listing{}
	}
	s, ok := l.sessions[session]
	if !ok {
		s = &listing{changed: make(chan struct{})}
		l.sessions[session] = s
	}
	return s
}

func (l *listings) forget(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sessions, session)
}

// ToolsVersion counts the changes of this host's registered tools. A
// transport reads it before it hands a tools/list to the host and reports
// it with ListAnswered once the answer is written.
func (h *Host) ToolsVersion() uint64 { return h.toolsVersion.Load() }

// ListAnswered records that session was sent a tools/list answer computed
// at tools version v; the answer is written, so the client has it before
// any later message of this host. Only sessions that expanded are tracked
// (a session id a client makes up adds nothing).
func (h *Host) ListAnswered(session string, v uint64) {
	h.lists.mu.Lock()
	defer h.lists.mu.Unlock()
	s, ok := h.lists.sessions[session]
	if !ok {
		return
	}
	s.deaf = false
	s.answered = max(s.answered, v)
	s.lists++
	close(s.changed)
	s.changed = make(chan struct{})
}

// relistWaiter starts tracking the calling session's listings, before an
// expansion changes the tools, and returns the wait for its answer: until
// the client has acted on the tool list of version v (see above), or the
// bounds run out. A session that cannot be notified is not waited for.
func (h *Host) relistWaiter(ctx context.Context) func(v uint64) {
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil || !sess.Initialized() || h.opts.RelistWait < 0 {
		return func(uint64) {}
	}
	id := sess.SessionID()
	h.lists.mu.Lock()
	h.lists.get(id)
	h.lists.mu.Unlock()
	return func(v uint64) { h.awaitRelist(ctx, id, v) }
}

func (h *Host) awaitRelist(ctx context.Context, id string, v uint64) {
	var seen uint64
	fetched := h.waitListing(ctx, id, func(s *listing) bool { seen = s.lists; return s.deaf || s.answered >= v })
	if ctx.Err() != nil {
		return
	}
	h.lists.mu.Lock()
	s := h.lists.get(id)
	if !fetched {
		s.deaf = true
		h.log.Debug("client did not fetch the tool list after list_changed", "session", id, "waited", h.relistWait())
	}
	deaf := s.deaf
	h.lists.mu.Unlock()
	if deaf || h.srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationToolsListChanged), nil) != nil {
		return
	}
	h.waitListing(ctx, id, func(s *listing) bool { return s.lists > seen })
}

// waitListing waits until cond holds for session's listing (checked under
// the lock, at once and at every answer), for RelistWait at most.
func (h *Host) waitListing(ctx context.Context, session string, cond func(*listing) bool) bool {
	timer := time.NewTimer(h.relistWait())
	defer timer.Stop()
	for {
		h.lists.mu.Lock()
		s := h.lists.get(session)
		ok, changed := cond(s), s.changed
		h.lists.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

func (h *Host) relistWait() time.Duration {
	if h.opts.RelistWait > 0 {
		return h.opts.RelistWait
	}
	return DefaultRelistWait
}

// releaseKey carries, in a call's context, the function that lets the
// transport go on with the messages it holds behind this one (see
// stdioFront.dispatch): an expansion calls it once its tools are
// registered, before it waits for the client's new tool list, which would
// otherwise queue behind the expansion itself.
type releaseKey struct{}

func withRelease(ctx context.Context, release func()) context.Context {
	return context.WithValue(ctx, releaseKey{}, release)
}

func releaseOrder(ctx context.Context) {
	if f, ok := ctx.Value(releaseKey{}).(func()); ok {
		f()
	}
}
