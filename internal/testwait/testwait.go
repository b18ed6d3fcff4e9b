// Package testwait bounds a test's waits: a regression that would make a
// wait hang fails the test with a message instead (the go test -timeout
// panic names no wait and takes every other test with it).
package testwait

import (
	"sync"
	"testing"
	"time"
)

// Deadline is how long a test waits for an event: long enough that a
// loaded machine does not fail a correct test.
const Deadline = time.Minute

// Recv returns the next value from ch (the zero value once ch is closed),
// failing t if none comes within Deadline. Call it on the test's goroutine.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Deadline):
		t.Fatalf("timed out after %v waiting for %s", Deadline, what)
		var zero T
		return zero
	}
}

// Send sends v on ch, failing t if no one takes it within Deadline. Call
// it on the test's goroutine.
func Send[T any](t testing.TB, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(Deadline):
		t.Fatalf("timed out after %v waiting to send %s", Deadline, what)
	}
}

// Wait waits for wg, failing t if it is not done within Deadline.
func Wait(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	Recv(t, done, what)
}
