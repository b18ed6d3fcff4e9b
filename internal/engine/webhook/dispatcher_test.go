package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/boltstore"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// fakeClock is moved by hand; After fires once the clock reaches it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	armed   chan struct{} // a timer was set
}

type waiter struct {
	at time.Time
	c  chan time.Time
}

func newClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_800_000_000, 0), armed: make(chan struct{}, 64)}
}

// awaitTimer waits until the dispatcher has set a timer, so that moving
// the clock cannot fall between its reading the time and setting one.
func (c *fakeClock) awaitTimer(t *testing.T) {
	t.Helper()
	select {
	case <-c.armed:
	case <-time.After(30 * time.Second):
		t.Fatal("the dispatcher set no timer")
	}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{c.now.Add(d), ch})
	c.armed <- struct{}{}
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.c <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// settled is what the store saw of one attempt's outcome.
type settled struct {
	d *storage.Delivery
	o storage.Outcome
}

// recordingStore tells the test about every settled attempt.
type recordingStore struct {
	*records.Store
	settled chan settled
}

func (s *recordingStore) SettleDelivery(ctx context.Context, queuedAt int64, d *storage.Delivery, o storage.Outcome) error {
	err := s.Store.SettleDelivery(ctx, queuedAt, d, o)
	c := *d
	s.settled <- settled{&c, o}
	return err
}

type rig struct {
	t      *testing.T
	st     *boltstore.Store
	rec    *recordingStore
	ev     *events.Broadcaster
	clock  *fakeClock
	sealer *webhook.Sealer
	cancel context.CancelFunc
	done   chan struct{}
}

var backoff = webhook.Backoff{Base: time.Second, Max: time.Minute, Attempts: 3}

func newRig(t *testing.T, guard webhook.Guard, dial webhook.DialFunc) *rig {
	t.Helper()
	dir := t.TempDir()
	ev := &events.Broadcaster{}
	st, err := boltstore.Open(storagetest.Operator(), filepath.Join(dir, "memory.db"), storage.Options{Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sealer, err := webhook.OpenSealer(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, st: st, rec: &recordingStore{Store: records.New(st), settled: make(chan settled, 64)}, ev: ev, clock: newClock(), sealer: sealer}
	r.start(guard, dial)
	return r
}

func (r *rig) start(guard webhook.Guard, dial webhook.DialFunc) {
	ctx, cancel := context.WithCancel(storagetest.Operator())
	r.cancel, r.done = cancel, make(chan struct{})
	d := webhook.New(webhook.Config{Store: r.rec, Events: r.ev, Guard: guard, Dial: dial, Sealer: r.sealer,
		Backoff: backoff, Timeout: 5 * time.Second, Clock: r.clock, Rand: func() float64 { return 0.5 }})
	go func() {
		defer close(r.done)
		d.Run(ctx)
	}()
	r.t.Cleanup(r.stop)
}

func (r *rig) stop() {
	r.cancel()
	testwait.Recv(r.t, r.done, "the dispatcher to stop")
}

func (r *rig) subscribe(url, secret string) *storage.Subscription {
	r.t.Helper()
	sub := &storage.Subscription{ID: "sub-" + secret, URL: url, Events: []string{"*"}, CreatedBy: "ai:owner", Scope: "*", CreatedAt: 1}
	if secret != "" {
		var err error
		if sub.SealedSecret, err = r.sealer.Seal(sub.ID, []byte(secret)); err != nil {
			r.t.Fatal(err)
		}
	}
	if err := r.st.PutSubscription(storagetest.Operator(), sub); err != nil {
		r.t.Fatal(err)
	}
	return sub
}

func (r *rig) store(title string) *aimemoryv1.Memory {
	r.t.Helper()
	ctx := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:writer", Scope: caller.AllNamespaces})
	resp, err := records.New(r.st).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "secret content " + title}})
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.GetMemory()
}

func (r *rig) next() settled {
	r.t.Helper()
	select {
	case s := <-r.rec.settled:
		return s
	case <-time.After(30 * time.Second):
		r.t.Fatal("no delivery attempt settled")
	}
	return settled{}
}

// receiver verifies every request's signature and answers with the next status.
type receiver struct {
	t        *testing.T
	secret   string
	clock    *fakeClock
	mu       sync.Mutex
	statuses []int
	bodies   []string
	ids      []string
}

func (v *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := webhook.Verify([]byte(v.secret), r.Header.Get(webhook.HeaderTimestamp), r.Header.Get(webhook.HeaderSignature),
		body, v.clock.Now(), 5*time.Minute); err != nil {
		v.t.Errorf("delivery fails verification: %v", err)
	}
	v.mu.Lock()
	code := http.StatusOK
	if len(v.statuses) > 0 {
		code, v.statuses = v.statuses[0], v.statuses[1:]
	}
	if code == http.StatusOK {
		v.bodies = append(v.bodies, string(body))
		v.ids = append(v.ids, r.Header.Get(webhook.HeaderDelivery))
	}
	v.mu.Unlock()
	w.WriteHeader(code)
}

var loopbackOnly = webhook.Guard{AllowLoopback: true}

func TestFailsTwiceThenDeliveredOnce(t *testing.T) {
	clock := newClock()
	recv := &receiver{t: t, secret: "s3cret as given", clock: clock, statuses: []int{500, 503}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	r := newRig(t, loopbackOnly, nil)
	r.clock = clock // the receiver checks timestamps against the dispatcher's clock
	r.stop()
	r.start(loopbackOnly, nil)

	sub := r.subscribe(srv.URL+"/hook", "s3cret as given")
	m := r.store("deploy plan")

	first := r.next()
	if first.o != storage.Retry || first.d.Attempts != 1 {
		t.Fatalf("first attempt: outcome %v attempts %d, want a retry after 1", first.o, first.d.Attempts)
	}
	// Backoff with jitter 0.5: base 1 s → 0.5 s + 0.25 s.
	if wait := time.Duration(first.d.NextAt - clock.Now().UnixNano()); wait != 750*time.Millisecond {
		t.Fatalf("first retry in %v, want 750ms (1s base, equal jitter at 0.5)", wait)
	}
	clock.awaitTimer(t)
	clock.Advance(750 * time.Millisecond)
	second := r.next()
	if second.o != storage.Retry || second.d.Attempts != 2 {
		t.Fatalf("second attempt: outcome %v attempts %d", second.o, second.d.Attempts)
	}
	if wait := time.Duration(second.d.NextAt - clock.Now().UnixNano()); wait != 1500*time.Millisecond {
		t.Fatalf("second retry in %v, want 1.5s (doubled)", wait)
	}
	clock.awaitTimer(t)
	clock.Advance(1500 * time.Millisecond)
	if third := r.next(); third.o != storage.Delivered {
		t.Fatalf("third attempt: outcome %v, want delivered", third.o)
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.bodies) != 1 {
		t.Fatalf("delivered %d times, want once", len(recv.bodies))
	}
	body := recv.bodies[0]
	for _, want := range []string{`"event":"memory_store"`, `"memory_id":"` + m.GetId() + `"`, `"title":"deploy plan"`, `"subscription_id":"` + sub.ID + `"`} {
		if !strings.Contains(body, want) {
			t.Errorf("payload %s lacks %s", body, want)
		}
	}
	if strings.Contains(body, "secret content") {
		t.Errorf("payload carries content the subscription did not ask for: %s", body)
	}
	if recv.ids[0] != sub.ID+":1" {
		t.Errorf("delivery id %q, want %s:1", recv.ids[0], sub.ID)
	}
	st, err := r.st.DeliveryState(storagetest.Operator(), sub.ID, 10)
	pending, dead := st.Pending, st.Dead
	if err != nil || pending != 0 || len(dead) != 0 {
		t.Fatalf("after delivery: pending %d, dead %v, %v", pending, dead, err)
	}
	subs, _ := r.st.ListSubscriptions(storagetest.Operator())
	if subs[0].Dispatched != 1 || subs[0].Failed != 2 {
		t.Fatalf("counters dispatched %d failed %d, want 1 and 2", subs[0].Dispatched, subs[0].Failed)
	}
}

func TestDownForGoodIsDeadLettered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer srv.Close()
	r := newRig(t, loopbackOnly, nil)
	sub := r.subscribe(srv.URL, "")
	m := r.store("lost cause")
	for i := 1; i <= backoff.Attempts; i++ {
		s := r.next()
		want := storage.Retry
		if i == backoff.Attempts {
			want = storage.Dead
		}
		if s.o != want || int(s.d.Attempts) != i {
			t.Fatalf("attempt %d: outcome %v attempts %d, want %v", i, s.o, s.d.Attempts, want)
		}
		if i < backoff.Attempts {
			r.clock.awaitTimer(t)
			r.clock.Advance(time.Minute)
		}
	}
	st, err := r.st.DeliveryState(storagetest.Operator(), sub.ID, 10)
	pending, dead, count := st.Pending, st.Dead, st.DeadCount
	if err != nil || pending != 0 || count != 1 || len(dead) != 1 {
		t.Fatalf("pending %d dead %v count %d err %v", pending, dead, count, err)
	}
	if d := dead[0]; d.GetMemoryId() != m.GetId() || d.GetAttempts() != 3 || !strings.Contains(d.GetLastError(), "502") {
		t.Fatalf("dead letter %v", d)
	}
}

func TestRestartResumesQueuedDelivery(t *testing.T) {
	var mu sync.Mutex
	got := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		got++
		mu.Unlock()
	}))
	defer srv.Close()
	r := newRig(t, loopbackOnly, nil)
	r.stop() // the dispatcher is down while the write happens
	r.subscribe(srv.URL, "")
	r.store("written while the dispatcher was down")
	r.start(loopbackOnly, nil)
	if s := r.next(); s.o != storage.Delivered {
		t.Fatalf("after restart: %v", s.o)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != 1 {
		t.Fatalf("delivered %d times", got)
	}
}

// A name resolving into a private range is refused at delivery, and
// nothing is dialled: the resolver and dialer are the test's.
type fakeResolver map[string]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

func TestPrivateTargetRefusedWithoutTraffic(t *testing.T) {
	var mu sync.Mutex
	var dialled []string
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return nil, errors.New("the test dialer never connects")
	}
	guard := webhook.Guard{Resolver: fakeResolver{"intranet.example.com": "10.1.2.3", "metadata.example.com": "169.254.169.254"}}
	r := newRig(t, guard, dial)
	r.subscribe("https://intranet.example.com/hook", "")
	r.store("probe")
	s := r.next()
	if s.o != storage.Retry || !strings.Contains(s.d.LastError, "private or link-local") {
		t.Fatalf("outcome %v error %q, want a refusal naming the private range", s.o, s.d.LastError)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialled) != 0 {
		t.Fatalf("dialled %v: a refused target must get no traffic", dialled)
	}
}

func TestDialerChecksEveryResolvedAddress(t *testing.T) {
	dialled := ""
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialled = addr
		return nil, errors.New("stop")
	}
	for _, tc := range []struct {
		guard   webhook.Guard
		host    string
		refused bool
	}{
		{webhook.Guard{}, "public.example.com:443", false},
		{webhook.Guard{}, "intranet.example.com:443", true},
		{webhook.Guard{}, "metadata.example.com:80", true},
		{webhook.Guard{}, "127.0.0.1:80", true},
		{webhook.Guard{AllowLoopback: true}, "127.0.0.1:80", false},
		{webhook.Guard{AllowLoopback: true}, "intranet.example.com:443", true},
		{webhook.Guard{AllowPrivate: true}, "intranet.example.com:443", false},
		{webhook.Guard{AllowPrivate: true, AllowLoopback: true}, "0.0.0.0:80", true},
		{webhook.Guard{}, "nat64.example.com:443", true},
		{webhook.Guard{AllowPrivate: true}, "nat64.example.com:443", false},
		{webhook.Guard{}, "[2002:7f00:1::]:80", true},
	} {
		tc.guard.Resolver = fakeResolver{"public.example.com": "93.184.216.34", "intranet.example.com": "10.1.2.3", "metadata.example.com": "169.254.169.254",
			"nat64.example.com": "64:ff9b::a9fe:a9fe"}
		dialled = ""
		_, err := tc.guard.Dialer(dial)(storagetest.Operator(), "tcp", tc.host)
		var refused *webhook.RefusedError
		if errors.As(err, &refused) != tc.refused || (tc.refused && dialled != "") {
			t.Errorf("%+v %s: err %v dialled %q", tc.guard, tc.host, err, dialled)
		}
		if !tc.refused && !strings.Contains(dialled, ":") {
			t.Errorf("%s: allowed but dialled %q", tc.host, dialled)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		guard webhook.Guard
		url   string
		want  string // "" = accepted
	}{
		{webhook.Guard{}, "https://hooks.example.com/x", ""},
		{webhook.Guard{}, "http://hooks.example.com/x", "must use https for a non-local host"},
		{webhook.Guard{}, "ftp://hooks.example.com/x", "scheme must be http or https"},
		{webhook.Guard{}, "https://user:pw@hooks.example.com/x", "must not carry user info"},
		{webhook.Guard{}, "https:///x", "must name a host"},
		{webhook.Guard{}, "", "is required"},
		{webhook.Guard{}, "http://127.0.0.1:9/x", "loopback"},
		{webhook.Guard{}, "http://localhost/x", "loopback"},
		{webhook.Guard{AllowLoopback: true}, "http://localhost:8080/x", ""},
		{webhook.Guard{AllowLoopback: true}, "http://[::1]:8080/x", ""},
		{webhook.Guard{}, "https://10.0.0.1/x", "private or link-local"},
		{webhook.Guard{}, "https://192.168.1.1/x", "private or link-local"},
		{webhook.Guard{}, "https://169.254.169.254/latest", "private or link-local"},
		{webhook.Guard{}, "https://[fe80::1]/x", "private or link-local"},
		{webhook.Guard{}, "https://[::ffff:10.0.0.1]/x", "private or link-local"},
		{webhook.Guard{AllowPrivate: true}, "http://10.0.0.1/x", ""},
		{webhook.Guard{AllowPrivate: true, AllowLoopback: true}, "https://0.0.0.0/x", "unspecified"},
		{webhook.Guard{}, "https://224.0.0.1/x", "multicast"},
		// IPv6 transition addresses are classed by the IPv4 address they carry.
		{webhook.Guard{}, "https://[64:ff9b::7f00:1]/x", "loopback"},
		{webhook.Guard{}, "https://[64:ff9b::a9fe:a9fe]/latest", "private or link-local"},
		{webhook.Guard{}, "https://[64:ff9b::5db8:d822]/x", ""},
		{webhook.Guard{}, "https://[64:ff9b:1::a00:1]/x", "private or link-local"},
		{webhook.Guard{}, "https://[64:ff9b:1:ff00::5db8:d822]/x", "private or link-local"},
		{webhook.Guard{}, "https://[::a00:1]/x", "private or link-local"},
		{webhook.Guard{}, "https://[::7f00:1]/x", "loopback"},
		{webhook.Guard{}, "https://[::2]/x", "unspecified"},
		{webhook.Guard{}, "https://[::ffff:0:7f00:1]/x", "loopback"},
		{webhook.Guard{}, "https://[::ffff:127.0.0.1]/x", "loopback"},
		{webhook.Guard{}, "https://[2002:a00:1::1]/x", "private or link-local"},
		{webhook.Guard{}, "https://[2002:7f00:1::]/x", "loopback"},
		{webhook.Guard{}, "https://[2002:5db8:d822::1]/x", ""},
		{webhook.Guard{}, "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x", "private or link-local"}, // Teredo client 10.0.0.1
		{webhook.Guard{}, "https://[fec0::1]/x", "private or link-local"},
		{webhook.Guard{}, "https://[2606:4700::1111]/x", ""},
		{webhook.Guard{}, "https://" + strings.Repeat("a", 2100), "at most 2048 bytes"},
	} {
		_, err := tc.guard.CheckURL(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%.80s refused: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "url: ")):
			t.Errorf("%.80s: err %v, want url: …%s", tc.url, err, tc.want)
		}
	}
}

func TestSealer(t *testing.T) {
	s, err := webhook.OpenSealer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.Seal("a", []byte("hunter2"))
	if err != nil || strings.Contains(string(sealed), "hunter2") {
		t.Fatalf("sealed %q, %v", sealed, err)
	}
	if got, err := s.Open("a", sealed); err != nil || string(got) != "hunter2" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := s.Open("b", sealed); err == nil {
		t.Fatal("a secret sealed for one subscription opened for another")
	}
}

func TestBackoffDelays(t *testing.T) {
	b := webhook.Backoff{Base: time.Second, Max: 5 * time.Second, Attempts: 10}
	for n, want := range map[int][2]time.Duration{1: {500 * time.Millisecond, time.Second}, 2: {time.Second, 2 * time.Second},
		3: {2 * time.Second, 4 * time.Second}, 4: {2500 * time.Millisecond, 5 * time.Second}, 9: {2500 * time.Millisecond, 5 * time.Second}} {
		lo, hi := b.Delay(n, func() float64 { return 0 }), b.Delay(n, func() float64 { return 0.999999 })
		if lo != want[0] || hi > want[1] || hi < want[1]-time.Millisecond {
			t.Errorf("attempt %d: delays %v..%v, want %v..%v", n, lo, hi, want[0], want[1])
		}
	}
}

func TestSignature(t *testing.T) {
	// Known answer: HMAC-SHA256 keyed "key" over "1700000000.{}" (Python's hmac agrees).
	got := webhook.Sign([]byte("key"), 1700000000, []byte("{}"))
	if got != "sha256=9d713ed406bb7076d4123f0dc2c39d2df5c654ed4b0cd56b52c8b4c940bd63ae" {
		t.Fatalf("signature %q", got)
	}
	now := time.Unix(1700000000, 0)
	if err := webhook.Verify([]byte("key"), "1700000000", got, []byte("{}"), now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := webhook.Verify([]byte("key"), "1700000000", got, []byte("{ }"), now, time.Minute); err == nil {
		t.Fatal("a changed body verified")
	}
	if err := webhook.Verify([]byte("key"), "1700000000", got, []byte("{}"), now.Add(time.Hour), time.Minute); err == nil {
		t.Fatal("an old timestamp verified")
	}
}

// Many deliveries settling while the loop reads the queue: each is
// attempted exactly once.
func TestEachDeliveryAttemptedOnce(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get(webhook.HeaderDelivery)]++
		mu.Unlock()
	}))
	defer srv.Close()
	r := newRig(t, loopbackOnly, nil)
	r.subscribe(srv.URL, "")
	const n = 200
	for i := range n {
		r.store(fmt.Sprintf("m%d", i))
	}
	for range n {
		if s := r.next(); s.o != storage.Delivered {
			t.Fatalf("outcome %v: %s", s.o, s.d.LastError)
		}
	}
	r.stop()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Fatalf("%d distinct deliveries, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("delivery %s attempted %d times", id, c)
		}
	}
}

// wakingStore is a store other processes fill too (storage.DeliveryWaker):
// the test sends its wake-ups.
type wakingStore struct {
	*recordingStore
	wake chan struct{}
}

func (s wakingStore) DeliveryWake(context.Context) <-chan struct{} { return s.wake }

// A dispatcher over a shared store is woken by the store's wake-ups (no
// broadcaster sees another engine's writes), and a lost wake-up only
// delays a delivery until its next look, 30 s later at most.
func TestSharedStoreWakeUpsAndBackstop(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	r := newRig(t, loopbackOnly, nil)
	r.stop()
	st := wakingStore{r.rec, make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(storagetest.Operator())
	done := make(chan struct{})
	d := webhook.New(webhook.Config{Store: st, Guard: loopbackOnly, Backoff: backoff, Clock: r.clock})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); testwait.Recv(t, done, "the dispatcher to stop") }()
	r.clock.awaitTimer(t) // idle, waiting

	r.subscribe(srv.URL+"/hook", "")
	r.store("written by another engine") // no broadcaster: nothing wakes it but the store
	st.wake <- struct{}{}
	if s := r.next(); s.o != storage.Delivered || s.d.Event.GetTitle() != "written by another engine" {
		t.Fatalf("after the wake-up: %v %v", s.o, s.d.Event)
	}
	r.clock.awaitTimer(t) // the look that started the attempt
	r.clock.awaitTimer(t) // the look after it settled: idle again
	r.store("its wake-up lost")
	r.clock.Advance(30 * time.Second)
	if s := r.next(); s.o != storage.Delivered || s.d.Event.GetTitle() != "its wake-up lost" {
		t.Fatalf("after the backstop look: %v %v", s.o, s.d.Event)
	}
}

// A subscription delivers what its creator's grant reads now: a grant
// narrowed by the creator's next call (webhook.Grants) stops matching, a
// delivery queued before it narrowed is dropped uncounted, never posted,
// and a wider grant (a session of the same name) widens nothing.
func TestNarrowedGrantStopsDelivery(t *testing.T) {
	clock := newClock()
	recv := &receiver{t: t, secret: "s", clock: clock}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	r := newRig(t, loopbackOnly, nil)
	r.clock = clock
	r.stop()
	r.start(loopbackOnly, nil)
	sub := &storage.Subscription{ID: "sub-a", URL: srv.URL + "/hook", Events: []string{"*"}, CreatedBy: "ai:owner", Family: "core",
		Scope: "team-a team-c", IncludeContent: true, CreatedAt: 1}
	var err error
	if sub.SealedSecret, err = r.sealer.Seal(sub.ID, []byte("s")); err != nil {
		t.Fatal(err)
	}
	if err := r.st.PutSubscription(storagetest.Operator(), sub); err != nil {
		t.Fatal(err)
	}
	grants := webhook.NewGrants(records.New(r.st), nil)
	if err := grants.Load(storagetest.Operator()); err != nil {
		t.Fatal(err)
	}
	writer := caller.NewContext(context.Background(), caller.Caller{Principal: "ai:writer", Scope: caller.AllNamespaces})
	storeIn := func(ns, title string) {
		t.Helper()
		if _, err := records.New(r.st).StoreMemory(writer, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "content of " + title, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	state := func() (pending uint64, scope string) {
		t.Helper()
		st, err := r.st.DeliveryState(storagetest.Operator(), sub.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		subs, _ := r.st.ListSubscriptions(storagetest.Operator())
		return st.Pending, subs[0].Scope
	}

	storeIn("team-b", "outside") // never matched: not the creator's
	if n, _ := state(); n != 0 {
		t.Fatalf("a store outside the grant queued %d deliveries", n)
	}
	storeIn("team-a", "inside")
	if s := r.next(); s.o != storage.Delivered {
		t.Fatalf("inside the grant: outcome %v", s.o)
	}

	// A session of the same name with every namespace widens nothing.
	grants.Note(storagetest.Operator(), caller.Caller{Principal: "ai:owner", Family: "core", Scope: caller.AllNamespaces})
	if _, scope := state(); scope != "team-a team-c" {
		t.Fatalf("a wider call widened the grant to %q", scope)
	}

	// A delivery queued before the creator's key narrowed is dropped.
	r.stop()
	storeIn("team-a", "queued before narrowing")
	grants.Note(storagetest.Operator(), caller.Caller{Principal: "ai:owner", Family: "core", Scope: "team-c"})
	if _, scope := state(); scope != "team-c" {
		t.Fatalf("the grant after a narrower call: %q", scope)
	}
	r.start(loopbackOnly, nil)
	if s := r.next(); s.o != storage.Dropped {
		t.Fatalf("a queued delivery the grant no longer reads: outcome %v, want dropped", s.o)
	}
	storeIn("team-a", "after narrowing")
	if n, _ := state(); n != 0 {
		t.Fatalf("a store outside the narrowed grant queued %d deliveries", n)
	}
	recv.mu.Lock()
	bodies := strings.Join(recv.bodies, "\n")
	recv.mu.Unlock()
	if len(recv.bodies) != 1 || strings.Contains(bodies, "narrowing") || strings.Contains(bodies, "outside") || !strings.Contains(bodies, "content of inside") {
		t.Errorf("posted: %s", bodies)
	}
	subs, _ := r.st.ListSubscriptions(storagetest.Operator())
	if subs[0].Dispatched != 1 || subs[0].Failed != 0 {
		t.Errorf("after the drop: dispatched %d failed %d", subs[0].Dispatched, subs[0].Failed)
	}
}
