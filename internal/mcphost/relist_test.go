package mcphost

import "testing"

// A tools/list answer is tracked only for a session that expanded: session
// ids a client makes up leave nothing behind.
func TestListAnsweredTracksOnlyExpandingSessions(t *testing.T) {
	h, _ := newTestHost(t, &fakePlugins{})
	for i := range 1000 {
		h.ListAnswered(string(rune('a'+i%26))+"-made-up", uint64(i))
	}
	if n := len(h.lists.sessions); n != 0 {
		t.Fatalf("%d sessions tracked after answers to sessions that never expanded", n)
	}
}
