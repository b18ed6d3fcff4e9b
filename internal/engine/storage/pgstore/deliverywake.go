package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeliveryWake (storage.DeliveryWaker) wakes a dispatcher when any engine
// of the database commits a write that queued deliveries: those writes
// NOTIFY deliveryChannel at commit (events.go), and this LISTENs on a
// connection of its own, outside the pool (a pooled one would be handed
// to others with the LISTEN on it). A notification is only a wake-up:
// one sent while the connection is down is lost, so each (re)connect
// wakes the dispatcher too, which then reads the queue itself.
// The listener ends with ctx or with Close, which waits for it.
func (s *Store) DeliveryWake(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	s.listeners.Lock()
	defer s.listeners.Unlock()
	if s.listeners.closed {
		cancel()
		return ch // closed: nothing will wake
	}
	s.listeners.cancel = append(s.listeners.cancel, cancel)
	s.listeners.running.Go(func() { s.listen(ctx, ch) })
	return ch
}

// listeners are DeliveryWake's goroutines, ended and joined by Close.
type listeners struct {
	sync.Mutex
	closed  bool
	cancel  []context.CancelFunc
	running sync.WaitGroup
}

// stopListeners ends DeliveryWake's listeners and waits for them.
func (s *Store) stopListeners() {
	s.listeners.Lock()
	s.listeners.closed = true
	for _, cancel := range s.listeners.cancel {
		cancel()
	}
	s.listeners.Unlock()
	s.listeners.running.Wait()
}

// listenRetry bounds the wait before reconnecting a lost listener.
const listenRetry = 5 * time.Second

func (s *Store) listen(ctx context.Context, ch chan<- struct{}) {
	wake := func() {
		select {
		case ch <- struct{}{}:
		default: // one already pending: the dispatcher reads everything queued
		}
	}
	const first = 100 * time.Millisecond
	wait := first
	for ctx.Err() == nil {
		listened, err := s.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		if listened {
			wait = first // it was up: a new failure starts the back-off afresh
		}
		s.log.Warn("webhook wake-up listener lost; reconnecting", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, listenRetry)
	}
}

// listenOnce listens until the connection fails or ctx ends; listened
// says whether it got as far as listening.
func (s *Store) listenOnce(ctx context.Context, wake func()) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+deliveryChannel); err != nil {
		return false, err
	}
	wake() // whatever was sent while this was not listening
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
		wake()
	}
}
