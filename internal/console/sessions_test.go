package console

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

type nopHost struct{}

func (nopHost) Call(context.Context, string, json.RawMessage) ([]byte, bool) { return nil, false }
func (nopHost) Callable(string) bool                                         { return false }

// useClock sets the pages' clock to *t for the test.
func useClock(t *testing.T, at *time.Time) {
	old := now
	now = func() time.Time { return *at }
	t.Cleanup(func() { now = old })
}

// A login link works once, and not after loginLinkLife; unknown ones never.
func TestLoginLinkOnce(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	useClock(t, &at)
	ss := newSessions(func(Principal) Host { return nopHost{} })
	link := ss.newLink()
	if !ss.useLink(link) {
		t.Fatal("a new link was refused")
	}
	if ss.useLink(link) {
		t.Error("a link worked twice")
	}
	late := ss.newLink()
	at = at.Add(loginLinkLife)
	if ss.useLink(late) {
		t.Error("a link worked after its life")
	}
	if ss.useLink("") || ss.useLink(randomToken()) {
		t.Error("an unknown link worked")
	}
}

// Sessions end when idle or old; a principal keeps at most
// sessionsPerPrincipal, its least recently used ending first; the host
// goes with the principal's last session.
func TestSessionBounds(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	useClock(t, &at)
	hosts := 0
	ss := newSessions(func(Principal) Host { hosts++; return nopHost{} })
	alice := Principal{ID: "alice", Namespaces: []string{"alice"}}
	first := ss.start(alice, "")
	var rest []*session
	for range sessionsPerPrincipal - 1 {
		at = at.Add(time.Second)
		rest = append(rest, ss.start(alice, ""))
	}
	at = at.Add(time.Second)
	ss.get(first.id) // used: the least recently used is now rest[0]
	ss.start(alice, "")
	if ss.get(first.id) == nil || ss.get(rest[0].id) != nil || hosts != 1 {
		t.Errorf("beyond the bound: first %v, least recently used %v, hosts built %d", ss.get(first.id) != nil, ss.get(rest[0].id) != nil, hosts)
	}
	at = at.Add(sessionIdle + time.Second)
	if ss.get(first.id) != nil {
		t.Error("an idle session lived on")
	}
	ss.mu.Lock()
	ss.sweep()
	left, hostsLeft := len(ss.byID), len(ss.hosts)
	ss.mu.Unlock()
	if left != 0 || hostsLeft != 0 {
		t.Errorf("after every session idled: %d sessions, %d hosts", left, hostsLeft)
	}
	bob := ss.start(Principal{ID: "bob"}, "")
	for range int(sessionLife/sessionIdle) + 1 {
		at = at.Add(sessionIdle - time.Minute)
		ss.get(bob.id)
	}
	if ss.get(bob.id) != nil {
		t.Error("a session outlived sessionLife")
	}
}
