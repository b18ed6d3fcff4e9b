package httpfront

import (
	"slices"
	"testing"
	"time"
)

// Over the bound a new session ends the least recently used idle one, a
// busy one only when every one is busy; only issued ids validate; idle
// ones expire.
func TestSessionsBoundAndExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	var ended []string
	s := newSessions(3, func() time.Time { return now })
	s.end = func(id string) { ended = append(ended, id) }
	issue := func() string {
		now = now.Add(time.Second)
		return s.Generate()
	}
	a, b, c := issue(), issue(), issue()
	s.enter(a) // a is the oldest but busy
	d := issue()
	if !slices.Equal(ended, []string{b}) || s.len() != 3 {
		t.Fatalf("ended %v (want b), %d live", ended, s.len())
	}
	if _, err := s.Validate(b); err == nil {
		t.Error("an ended session validates")
	}
	if _, err := s.Validate("mcp-session-00000000-0000-0000-0000-000000000000"); err == nil {
		t.Error("an id never issued validates")
	}
	s.enter(c)
	s.enter(d)
	e := issue() // every one busy: the least recently used goes
	if !slices.Equal(ended, []string{b, a}) {
		t.Fatalf("ended %v, want b then a", ended)
	}
	s.leave(c)
	s.named(e, "alpha")
	if name, ok := s.enter(e); !ok || name != "alpha" {
		t.Errorf("enter(e) = %q %v", name, ok)
	}
	s.leave(e)
	now = now.Add(time.Hour)
	if left := s.expire(now.Add(-time.Minute)); left != 1 || !slices.Contains(ended, c) || !slices.Contains(ended, e) {
		t.Errorf("expire left %d, ended %v (d is busy and stays)", left, ended)
	}
	if _, err := s.Terminate(d); err != nil || s.len() != 0 {
		t.Errorf("terminate: %v, %d live", err, s.len())
	}
}
