package webhook

import "time"

// Clock is the dispatcher's time: real in the engine, moved by hand in tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Backoff is the retry schedule: attempt n (from 1) failing waits
// Base·2^(n-1), capped at Max, with "equal jitter" (half fixed, half
// random), before attempt n+1; after Attempts attempts a delivery is
// dead-lettered.
type Backoff struct {
	Base, Max time.Duration
	Attempts  int
}

// DefaultBackoff: 8 attempts over about four minutes.
var DefaultBackoff = Backoff{Base: time.Second, Max: 10 * time.Minute, Attempts: 8}

// Delay is the wait after failed attempt n; rnd returns [0, 1).
func (b Backoff) Delay(n int, rnd func() float64) time.Duration {
	d := b.Base
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d/2 + time.Duration(rnd()*float64(d/2))
}
