package engine

import (
	"context"
	"log/slog"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
)

// leader is a backend whose Lead hands out the leaderships sent on grant.
type leader struct {
	storage.Backend
	grant    chan chan struct{} // each: the lost channel of one leadership
	released chan struct{}
}

func (l *leader) Lead(ctx context.Context, _ string) (<-chan struct{}, func(), error) {
	select {
	case lost := <-l.grant:
		return lost, func() { l.released <- struct{}{} }, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// A backend without Leadership always leads; with it, the work runs only
// while the leadership is held, stops when it is lost, and runs again on
// the next one.
func TestRunLedFollowsTheLeadership(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	ran := false
	runLed(storagetest.Operator(), struct{ storage.Backend }{}, "t", log, func(context.Context) { ran = true })
	if !ran {
		t.Fatal("a single-engine backend's work did not run")
	}

	l := &leader{grant: make(chan chan struct{}), released: make(chan struct{}, 2)}
	ctx, cancel := context.WithCancel(storagetest.Operator())
	started := make(chan context.Context)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runLed(ctx, l, "t", log, func(wctx context.Context) {
			started <- wctx
			<-wctx.Done()
		})
	}()
	first := make(chan struct{})
	testwait.Send(t, l.grant, first, "the first leadership")
	w := testwait.Recv(t, started, "the work to start")
	close(first) // the leadership's connection died
	testwait.Recv(t, w.Done(), "the work to stop on the lost leadership")
	testwait.Recv(t, l.released, "the lost leadership to be released")
	second := make(chan struct{})
	testwait.Send(t, l.grant, second, "the second leadership")
	w = testwait.Recv(t, started, "the work to start again")
	cancel()
	testwait.Recv(t, w.Done(), "the work to stop on cancel")
	testwait.Recv(t, done, "runLed to return")
	testwait.Recv(t, l.released, "the second leadership to be released")
}
