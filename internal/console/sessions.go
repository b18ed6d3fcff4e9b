package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// Session bounds: a session ends after sessionIdle unused or sessionLife
// in all; a principal keeps at most sessionsPerPrincipal (a new one ends
// its least recently used), the console at most maxSessions.
const (
	sessionIdle          = 30 * time.Minute
	sessionLife          = 12 * time.Hour
	sessionsPerPrincipal = 16
	maxSessions          = 4096
	loginLinkLife        = 10 * time.Minute
	maxLoginLinks        = 16
	cookieName           = "aim_session"
	preCookieName        = "aim_signin" // the sign-in form's CSRF token, before a session exists
)

// session is one signed-in browser.
type session struct {
	id, csrf string
	p        Principal
	key      string // the API key it signed in with (team mode), checked again on every request
	entry    *hostEntry
	created  time.Time
	used     time.Time
	notices  []notice // shown once, on the next page (post, redirect, get)
}

// hostEntry is a principal's host, shared by its sessions.
type hostEntry struct {
	host     Host
	sessions int
}

// sessions holds the signed-in sessions, the hosts they use and the
// login links not used yet.
type sessions struct {
	newHost func(Principal) Host

	mu    sync.Mutex
	byID  map[string]*session
	hosts map[string]*hostEntry // by Principal.key
	links map[string]time.Time  // one-time login token → its expiry
}

func newSessions(newHost func(Principal) Host) *sessions {
	return &sessions{newHost: newHost, byID: map[string]*session{}, hosts: map[string]*hostEntry{}, links: map[string]time.Time{}}
}

// randomToken is 32 random bytes, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// newLink is a new one-time login token; the oldest goes beyond maxLoginLinks.
func (ss *sessions) newLink() string {
	t := randomToken()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for len(ss.links) >= maxLoginLinks {
		var oldest string
		for k, exp := range ss.links {
			if oldest == "" || exp.Before(ss.links[oldest]) {
				oldest = k
			}
		}
		delete(ss.links, oldest)
	}
	ss.links[t] = now().Add(loginLinkLife)
	return t
}

// useLink consumes a login token: true once, while it is valid.
func (ss *sessions) useLink(token string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, exp := range ss.links {
		if subtle.ConstantTimeCompare([]byte(k), []byte(token)) == 1 {
			delete(ss.links, k)
			return now().Before(exp)
		}
	}
	return false
}

// start opens a session for p, ending p's least recently used one beyond
// the per-principal bound and the oldest beyond the console's.
func (ss *sessions) start(p Principal, key string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.sweep()
	var mine []*session
	for _, s := range ss.byID {
		if s.p.ID == p.ID {
			mine = append(mine, s)
		}
	}
	for len(mine) >= sessionsPerPrincipal {
		lru := 0
		for i, s := range mine {
			if s.used.Before(mine[lru].used) {
				lru = i
			}
		}
		ss.end(mine[lru])
		mine = append(mine[:lru], mine[lru+1:]...)
	}
	for len(ss.byID) >= maxSessions {
		var oldest *session
		for _, s := range ss.byID {
			if oldest == nil || s.used.Before(oldest.used) {
				oldest = s
			}
		}
		ss.end(oldest)
	}
	e := ss.hosts[p.Key()]
	if e == nil {
		e = &hostEntry{host: ss.newHost(p)}
		ss.hosts[p.Key()] = e
	}
	e.sessions++
	t := now()
	s := &session{id: randomToken(), csrf: randomToken(), p: p, key: key, entry: e, created: t, used: t}
	ss.byID[s.id] = s
	return s
}

// get is the live session of id, marked used; nil when there is none.
func (ss *sessions) get(id string) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	if s == nil {
		return nil
	}
	t := now()
	if t.Sub(s.used) > sessionIdle || t.Sub(s.created) > sessionLife {
		ss.end(s)
		return nil
	}
	s.used = t
	return s
}

// stop ends a session (sign-out, or its key no longer valid).
func (ss *sessions) stop(s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID[s.id] == s {
		ss.end(s)
	}
}

// end removes s and, with its last session, its principal's host.
// Callers hold mu.
func (ss *sessions) end(s *session) {
	delete(ss.byID, s.id)
	if s.entry.sessions--; s.entry.sessions == 0 {
		delete(ss.hosts, s.p.Key())
	}
}

// sweep ends expired sessions and drops expired links. Callers hold mu.
func (ss *sessions) sweep() {
	t := now()
	for _, s := range ss.byID {
		if t.Sub(s.used) > sessionIdle || t.Sub(s.created) > sessionLife {
			ss.end(s)
		}
	}
	for k, exp := range ss.links {
		if !t.Before(exp) {
			delete(ss.links, k)
		}
	}
}

// addNotice queues a message for the session's next page.
func (ss *sessions) addNotice(s *session, n notice) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s.notices = append(s.notices, n)
}

// takeNotices returns and clears the session's messages.
func (ss *sessions) takeNotices(s *session) []notice {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := s.notices
	s.notices = nil
	return n
}
