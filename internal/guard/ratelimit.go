package guard

import (
	"sync"
	"time"
)

// RateLimit allows each identity one new family per interval. A zero
// interval disables it.
type RateLimit struct {
	interval time.Duration
	now      func() time.Time
	mu       sync.Mutex
	last     map[string]time.Time
}

// NewRateLimit builds a limiter; now is injectable for tests (nil = time.Now).
func NewRateLimit(interval time.Duration, now func() time.Time) *RateLimit {
	if now == nil {
		now = time.Now
	}
	return &RateLimit{interval: interval, now: now, last: map[string]time.Time{}}
}

// Take records a new family for agentID if the interval has passed since
// its last one; otherwise it returns how long to wait.
func (r *RateLimit) Take(agentID string) (ok bool, wait time.Duration) {
	if r == nil || r.interval <= 0 {
		return true, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if last, seen := r.last[agentID]; seen && now.Sub(last) < r.interval {
		return false, r.interval - now.Sub(last)
	}
	r.last[agentID] = now
	return true, 0
}

// Interval is the configured spacing between new families.
func (r *RateLimit) Interval() time.Duration {
	if r == nil {
		return 0
	}
	return r.interval
}
