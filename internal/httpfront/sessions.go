package httpfront

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/server"
)

// sessions is one principal's MCP sessions, as mcp-go's SessionIdManager
// for that principal's transport: only ids it issued are valid, at most max
// are live (a new one ends the least recently used idle one), and the front
// ends those idle longer than its session lifetime. It also keeps each
// session's client name, so calls the host answers itself know it.
type sessions struct {
	max int
	now func() time.Time
	end func(id string) // drops a session's state in mcp-go

	mu   sync.Mutex
	byID map[string]*session
}

type session struct {
	lastUse time.Time
	busy    int    // requests and streams in flight
	client  string // clientInfo.name from initialize
}

var _ server.SessionIdManager = (*sessions)(nil)

var errUnknownSession = errors.New("unknown or ended session")

func newSessions(max int, now func() time.Time) *sessions {
	return &sessions{max: max, now: now, byID: map[string]*session{}}
}

// Generate issues a session id; over the bound, the least recently used
// idle session (or, with every one busy, the least recently used) ends.
func (s *sessions) Generate() string {
	id := "mcp-session-" + uuid.NewString()
	s.mu.Lock()
	now := s.now()
	var victim string
	if len(s.byID) >= s.max {
		victim = s.leastRecentLocked()
		delete(s.byID, victim)
	}
	s.byID[id] = &session{lastUse: now}
	s.mu.Unlock()
	if victim != "" {
		s.end(victim)
	}
	return id
}

func (s *sessions) leastRecentLocked() string {
	var victim string
	var v *session
	for id, ss := range s.byID {
		if v == nil || endsBefore(ss, v) {
			victim, v = id, ss
		}
	}
	return victim
}

// endsBefore: an idle session goes before a busy one, then the least
// recently used first.
func endsBefore(a, b *session) bool {
	if (a.busy == 0) != (b.busy == 0) {
		return a.busy == 0
	}
	return a.lastUse.Before(b.lastUse)
}

// Validate accepts only a live session this table issued.
func (s *sessions) Validate(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byID[id]
	if !ok {
		return false, errUnknownSession
	}
	ss.lastUse = s.now()
	return false, nil
}

// Terminate forgets a session (the client's DELETE, or an eviction).
func (s *sessions) Terminate(id string) (bool, error) {
	s.mu.Lock()
	delete(s.byID, id)
	s.mu.Unlock()
	return false, nil
}

// enter marks a request of session id in flight and returns its client
// name; ok is false for a session this table does not hold.
func (s *sessions) enter(id string) (client string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byID[id]
	if !ok {
		return "", false
	}
	ss.busy++
	ss.lastUse = s.now()
	return ss.client, true
}

// leave ends what enter began.
func (s *sessions) leave(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss, ok := s.byID[id]; ok {
		ss.busy--
		ss.lastUse = s.now()
	}
}

// named records the client name initialize gave session id.
func (s *sessions) named(id, client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss, ok := s.byID[id]; ok {
		ss.client = client
	}
}

// expire ends the sessions idle since before cutoff and returns how many
// are left.
func (s *sessions) expire(cutoff time.Time) int {
	s.mu.Lock()
	var ended []string
	for id, ss := range s.byID {
		if ss.busy == 0 && ss.lastUse.Before(cutoff) {
			ended = append(ended, id)
			delete(s.byID, id)
		}
	}
	left := len(s.byID)
	s.mu.Unlock()
	for _, id := range ended {
		s.end(id)
	}
	return left
}

func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// endSession drops a session's state in mcp-go through the transport's own
// DELETE path, the one way it offers to end a single session.
func endSession(h http.Handler, id string) {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/mcp", nil)
	req.Header.Set(server.HeaderKeySessionID, id)
	h.ServeHTTP(discardWriter{}, req)
}

// discardWriter is the ResponseWriter of endSession's internal request.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
