package models

import (
	"fmt"
	"sync"
	"time"
)

// CoolDown is how long a failed endpoint is left alone, so a caller pays
// a failing endpoint's timeout at most once per cool-down.
const CoolDown = 30 * time.Second

// Breaker remembers an endpoint's last failure.
type Breaker struct {
	Now func() time.Time // nil: time.Now

	mu    sync.Mutex
	err   string
	errAt time.Time
}

func (b *Breaker) now() time.Time {
	if b.Now == nil {
		return time.Now()
	}
	return b.Now()
}

// Fail records a failure.
func (b *Breaker) Fail(err error) {
	b.mu.Lock()
	b.err, b.errAt = err.Error(), b.now()
	b.mu.Unlock()
}

// OK records a success.
func (b *Breaker) OK() {
	b.mu.Lock()
	b.err = ""
	b.mu.Unlock()
}

// Open is why the endpoint is not to be asked now ("" when it may be).
func (b *Breaker) Open() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != "" && b.now().Sub(b.errAt) < CoolDown {
		return fmt.Sprintf("failed %s ago (%s)", b.now().Sub(b.errAt).Round(time.Second), b.err)
	}
	return ""
}

// Last is the last failure and when ("" after a success).
func (b *Breaker) Last() (string, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err, b.errAt
}
