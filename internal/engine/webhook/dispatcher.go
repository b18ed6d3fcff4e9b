package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// EventTypes are the event types a subscription may name (or "*"). Some
// are emitted by operations other issues add; naming one is not an error.
var EventTypes = []string{
	storage.EventStore, storage.EventUpdate, storage.EventDelete, storage.EventGC, storage.EventPromote, storage.EventForget,
	storage.EventLinkCreated, storage.EventLinkInvalidated, storage.EventConsolidated, storage.EventApprovalRequested,
}

// Store is what the dispatcher needs of the backend.
type Store interface {
	storage.EventLog
	storage.Subscriptions
	GetMemories(context.Context, *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error)
}

// Config configures a Dispatcher. Zero values are the defaults.
type Config struct {
	Store  Store
	Events *events.Broadcaster // committed writes wake the dispatcher; nil: it polls every second
	Guard  Guard
	Dial   DialFunc // nil: a net.Dialer; always wrapped by Guard.Dialer
	Sealer *Sealer
	Backoff
	Timeout time.Duration  // per attempt; 0: 5 s
	Workers int            // attempts in flight at most; 0: 8
	Clock   Clock          // nil: real time
	Rand    func() float64 // jitter; nil: math/rand/v2
	// Hold keeps the engine up while deliveries are queued; nil: nothing.
	Hold func() (release func())
	// Settled is told of each attempt's settled outcome (the engine's
	// metrics); nil: nothing.
	Settled func(storage.Outcome)
	Log     *slog.Logger
}

// Dispatcher attempts the queued deliveries. The store queues them in the
// transaction of the write whose event they carry, so its whole state is
// on disk: a restart (even after kill -9) attempts again whatever was not
// settled. So delivery is at least once; HeaderDelivery lets a receiver
// drop repeats. It never blocks a write: writers only publish to the
// broadcaster (which wakes it, and drops wake-ups rather than wait), and
// its own writes (one per settled attempt) are small group-commit members.
type Dispatcher struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger

	mu       sync.Mutex
	inflight map[string]bool
	perSub   map[string]int // attempts in flight per subscription
	settled  chan struct{}
	release  func()
	attempts sync.WaitGroup
}

// New builds a dispatcher; Run starts it.
func New(cfg Config) *Dispatcher {
	if cfg.Backoff == (Backoff{}) {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Backoff.Attempts <= 0 {
		cfg.Backoff.Attempts = DefaultBackoff.Attempts
	}
	if cfg.Backoff.Max <= 0 {
		cfg.Backoff.Max = DefaultBackoff.Max
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	tr := &http.Transport{
		Proxy:                 nil, // an environment proxy would dial what the guard never saw
		DialContext:           cfg.Guard.Dialer(cfg.Dial),
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
	}
	return &Dispatcher{
		cfg: cfg, log: cfg.Log, inflight: map[string]bool{}, perSub: map[string]int{}, settled: make(chan struct{}, 1),
		client: &http.Client{Transport: tr, Timeout: cfg.Timeout,
			// A redirect could point anywhere; a 3xx is a failed attempt.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// Run dispatches until ctx ends. Attempts cut short by the end are
// neither counted nor settled: they are attempted again after a restart.
func (d *Dispatcher) Run(ctx context.Context) error {
	var wake <-chan *aimemoryv1.Event
	if d.cfg.Events != nil {
		sub := d.cfg.Events.Subscribe(16)
		defer sub.Close()
		wake = sub.C
	}
	// A store other engines share wakes it for their writes too; its
	// wake-ups may be lost, so it also looks every remotePoll.
	var remote <-chan struct{}
	if w, ok := storage.As[storage.DeliveryWaker](d.cfg.Store); ok {
		remote = w.DeliveryWake(ctx)
	}
	defer d.setHold(false)
	defer d.attempts.Wait() // each sees ctx end and stops without settling
	for {
		next, queued, err := d.dispatchDue(ctx)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("webhook dispatch", "err", err)
			next, queued = time.Second, true // the store failed: try again soon
		}
		d.setHold(queued)
		var timer <-chan time.Time
		switch {
		case next > 0 && (remote == nil || next < remotePoll):
			timer = d.cfg.Clock.After(next)
		case remote != nil:
			timer = d.cfg.Clock.After(remotePoll)
		case wake == nil:
			timer = d.cfg.Clock.After(time.Second)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-remote:
		case <-wake:
		case <-timer:
		case <-d.settled:
		}
	}
}

func (d *Dispatcher) setHold(on bool) {
	switch {
	case on && d.release == nil && d.cfg.Hold != nil:
		d.release = d.cfg.Hold()
	case !on && d.release != nil:
		d.release()
		d.release = nil
	}
}

// remotePoll is how often a dispatcher over a shared store looks at the
// queue with no wake-up: the bound on the delay a lost one costs.
const remotePoll = 30 * time.Second

// maxPerSubscription bounds one subscription's attempts in flight.
const maxPerSubscription = 2

// dispatchDue starts an attempt for each due delivery not in flight, up
// to Workers, and says how long until the next one is due (0: none
// waiting) and whether anything is queued.
func (d *Dispatcher) dispatchDue(ctx context.Context) (next time.Duration, queued bool, err error) {
	// Under mu from before the read: an attempt settles (commits) before it
	// leaves inflight under mu, so a delivery read here is either still in
	// flight or already settled and gone, never attempted twice.
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.inflight) >= d.cfg.Workers { // nothing to start: a settled attempt wakes the loop
		return 0, true, nil
	}
	now := d.cfg.Clock.Now()
	full := func(sub string) bool { return d.perSub[sub] >= maxPerSubscription }
	busy := func(sub string, seq uint64) bool {
		return d.inflight[sub+":"+strconv.FormatUint(seq, 10)] || full(sub)
	}
	room := d.cfg.Workers - len(d.inflight)
	queue, at, err := d.cfg.Store.DueDeliveries(ctx, now.UnixNano(), room, full, busy)
	if err != nil {
		return 0, true, err
	}
	if at != 0 {
		next = time.Duration(at - now.UnixNano())
	}
	if len(queue) == 0 {
		// Nothing to start; queued if something is in flight or waiting.
		return next, len(d.inflight) > 0 || at != 0, nil
	}
	subs, err := d.cfg.Store.ListSubscriptions(ctx)
	if err != nil {
		return 0, true, err
	}
	byID := make(map[string]*storage.Subscription, len(subs))
	for _, s := range subs {
		byID[s.ID] = s
	}
	for _, q := range queue {
		if busy(q.SubscriptionID, q.Event.GetSeq()) {
			continue // a second delivery of a subscription in this batch
		}
		d.inflight[deliveryID(q)] = true
		d.perSub[q.SubscriptionID]++
		d.attempts.Add(1)
		go func() {
			defer d.attempts.Done()
			d.attempt(ctx, byID[q.SubscriptionID], q)
		}()
	}
	return next, true, nil
}

func deliveryID(q *storage.Delivery) string {
	return q.SubscriptionID + ":" + strconv.FormatUint(q.Event.GetSeq(), 10)
}

// attempt posts one delivery and settles its outcome.
func (d *Dispatcher) attempt(ctx context.Context, s *storage.Subscription, q *storage.Delivery) {
	key := deliveryID(q)
	defer func() {
		d.mu.Lock()
		delete(d.inflight, key)
		if d.perSub[q.SubscriptionID]--; d.perSub[q.SubscriptionID] <= 0 {
			delete(d.perSub, q.SubscriptionID)
		}
		d.mu.Unlock()
		select {
		case d.settled <- struct{}{}:
		default:
		}
	}()
	queuedAt := q.NextAt
	// Unsubscribed meanwhile, or its creator's grant (as recorded now)
	// no longer reads the event's namespace: dropped, not even counted.
	if s == nil || !authz.For(s.Creator()).Reads(q.Event.GetNamespace()) {
		if err := d.cfg.Store.SettleDelivery(ctx, queuedAt, q, storage.Dropped); err != nil && ctx.Err() == nil {
			d.log.Warn("webhook settle", "delivery", key, "err", err)
		}
		return
	}
	err := d.post(ctx, s, q)
	if ctx.Err() != nil {
		return // stopping: attempted again after the restart
	}
	outcome := storage.Delivered
	if err != nil {
		q.Attempts++
		q.LastError = truncate(err.Error(), 200)
		if int(q.Attempts) >= d.cfg.Backoff.Attempts {
			outcome = storage.Dead
			d.log.Warn("webhook delivery dead-lettered", "delivery", key, "attempts", q.Attempts, "err", q.LastError)
		} else {
			outcome = storage.Retry
			q.NextAt = d.cfg.Clock.Now().Add(d.cfg.Backoff.Delay(int(q.Attempts), d.cfg.Rand)).UnixNano()
			d.log.Info("webhook delivery failed, will retry", "delivery", key, "attempts", q.Attempts, "err", q.LastError)
		}
	}
	if err := d.cfg.Store.SettleDelivery(context.WithoutCancel(ctx), queuedAt, q, outcome); err != nil {
		d.log.Warn("webhook settle", "delivery", key, "err", err)
	} else if d.cfg.Settled != nil {
		d.cfg.Settled(outcome)
	}
}

// Payload is a delivery's JSON body.
type Payload struct {
	Event          string `json:"event"`
	Seq            uint64 `json:"seq"`
	SubscriptionID string `json:"subscription_id"`
	MemoryID       string `json:"memory_id"`
	Namespace      string `json:"namespace"`
	Title          string `json:"title,omitempty"`
	AgentID        string `json:"agent_id,omitempty"`
	Principal      string `json:"principal,omitempty"`
	At             string `json:"at"`
	// Content only for a subscription made with include_content, and only
	// while the memory is still there to read.
	Content string `json:"content,omitempty"`
}

func (d *Dispatcher) post(ctx context.Context, s *storage.Subscription, q *storage.Delivery) error {
	e := q.Event
	p := Payload{
		Event: e.GetType(), Seq: e.GetSeq(), SubscriptionID: s.ID, MemoryID: e.GetMemoryId(), Namespace: e.GetNamespace(),
		Title: e.GetTitle(), AgentID: e.GetAgentId(), Principal: e.GetPrincipal(),
		At: time.Unix(0, e.GetAt()).UTC().Format(time.RFC3339Nano),
	}
	if s.IncludeContent {
		p.Content = d.content(ctx, s, e.GetMemoryId())
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	var secret []byte
	if len(s.SealedSecret) > 0 {
		if d.cfg.Sealer == nil {
			return errors.New("no secret key to sign with")
		}
		if secret, err = d.cfg.Sealer.Open(s.ID, s.SealedSecret); err != nil {
			return err
		}
	}
	actx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	ts := d.cfg.Clock.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ai-memory-webhook")
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderDelivery, deliveryID(q))
	req.Header.Set(HeaderEvent, e.GetType())
	if secret != nil {
		req.Header.Set(HeaderSignature, Sign(secret, ts, body))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return nil
}

// content reads the memory as the subscription's creator, with its grant
// as recorded now: "" when it is gone or not readable.
func (d *Dispatcher) content(ctx context.Context, s *storage.Subscription, id string) string {
	cctx := caller.NewContext(ctx, s.Creator())
	resp, err := d.cfg.Store.GetMemories(cctx, &aimemoryv1.GetMemoriesRequest{Ids: []string{id}})
	if err != nil || len(resp.GetMemories()) == 0 {
		return ""
	}
	return resp.GetMemories()[0].GetContent()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
