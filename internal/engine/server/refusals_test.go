package server

import (
	"fmt"
	"testing"
	"time"
)

// TestRefusalLimit: one principal's flood is recorded up to its burst and
// then at its rate, every refusal held back is counted into its next
// record; all principals together are bounded too; and the principals
// remembered stay bounded.
func TestRefusalLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newRefusalLimit(func() time.Time { return now })

	recorded, held := 0, uint64(0)
	for range 1000 {
		if n, ok := l.admit("mallory"); ok {
			recorded++
			held += n
		}
	}
	if recorded != RefusalBurst || held != 0 {
		t.Fatalf("a burst of 1000: %d recorded (carrying %d), want %d", recorded, held, RefusalBurst)
	}
	if _, ok := l.admit("alice"); !ok {
		t.Fatal("another principal was held back by mallory's flood")
	}
	now = now.Add(time.Second / RefusalRate)
	n, ok := l.admit("mallory")
	if !ok || n != 1000-RefusalBurst {
		t.Fatalf("mallory's next record after a refill: %v, carrying %d; want %d", ok, n, 1000-RefusalBurst)
	}
	if n, ok := l.admit("mallory"); ok || n != 0 {
		t.Fatalf("a second record within the refill: %v", ok)
	}

	// All principals together: at most ten bursts at once.
	now = now.Add(time.Hour)
	recorded = 0
	for i := range 1000 {
		if _, ok := l.admit(fmt.Sprintf("p%d", i)); ok {
			recorded++
		}
	}
	if recorded != 10*RefusalBurst {
		t.Fatalf("1000 principals at once: %d recorded, want the overall burst %d", recorded, 10*RefusalBurst)
	}

	// Remembered principals stay bounded: idle ones are forgotten, and past
	// the bound the rest share one budget.
	for i := range 3 * maxRefusers {
		now = now.Add(time.Second)
		l.admit(fmt.Sprintf("q%d", i))
	}
	if len(l.per) > maxRefusers+1 {
		t.Fatalf("%d principals remembered, bound %d", len(l.per), maxRefusers)
	}
}
