package pgstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// countingReceiver counts deliveries by their delivery id (subscription:seq).
type countingReceiver struct {
	t      *testing.T
	secret []byte
	mu     sync.Mutex
	got    map[string]int
	seen   chan struct{}
}

func (v *countingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		v.t.Errorf("read delivery: %v", err)
	}
	if err := webhook.Verify(v.secret, r.Header.Get(webhook.HeaderTimestamp), r.Header.Get(webhook.HeaderSignature),
		body, time.Now(), 5*time.Minute); err != nil {
		v.t.Errorf("delivery fails verification: %v", err)
	}
	v.mu.Lock()
	v.got[r.Header.Get(webhook.HeaderDelivery)]++
	v.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	select {
	case v.seen <- struct{}{}:
	default: // more than expected: the final count tells
	}
}

// settleCounter counts the settles of one engine's dispatcher.
type settleCounter struct {
	*records.Store
	n *atomic.Int64
}

func (c settleCounter) SettleDelivery(ctx context.Context, queuedAt int64, d *storage.Delivery, o storage.Outcome) error {
	c.n.Add(1)
	return c.Store.SettleDelivery(ctx, queuedAt, d, o)
}

// TestTwoDispatchersDeliverOnce: two engines on one database, each with
// its own dispatcher, race over one delivery queue that writes on both
// fill while they run. Every event reaches every subscription exactly
// once, whichever engine posts it; the dispatchers are woken by the
// other engine's writes through NOTIFY (they have no broadcaster, and
// would otherwise look only every 30 s).
func TestTwoDispatchersDeliverOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	engines := [2]*Store{openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})}
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	sealer, err := webhook.NewSealer(key) // both data dirs hold the same webhook.key
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range engines {
		if err := webhook.BindKey(storagetest.Operator(), s, sealer); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "shared secret"
	const subs, writers, writes = 3, 4, 25
	recv := &countingReceiver{t: t, secret: []byte(secret), got: map[string]int{}, seen: make(chan struct{}, 2*subs*writers*writes)}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ctx := storagetest.Operator()
	for i := range subs {
		id := fmt.Sprintf("sub%d", i)
		sealed, err := sealer.Seal(id, []byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		err = engines[i%2].PutSubscription(ctx, &storage.Subscription{ID: id, URL: fmt.Sprintf("%s/hook/%d", srv.URL, i),
			Events: []string{"*"}, SealedSecret: sealed, CreatedBy: "ai:alice", Scope: "*", CreatedAt: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
	}

	dctx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	var settled [2]atomic.Int64
	for i, s := range engines {
		d := webhook.New(webhook.Config{Store: settleCounter{records.New(s), &settled[i]}, Guard: webhook.Guard{AllowLoopback: true}, Sealer: sealer, Workers: 4})
		running.Go(func() {
			if err := d.Run(dctx); err != nil {
				t.Errorf("dispatcher %d: %v", i, err)
			}
		})
	}
	defer func() { stop(); testwait.Wait(t, &running, "the dispatchers to stop") }()

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			s := engines[w%2]
			for i := range writes {
				if _, err := records.New(s).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("writer %d note %d", w, i), Content: "c", Confidence: 1}}); err != nil {
					t.Errorf("writer %d write %d: %v", w, i, err)
					return
				}
			}
		})
	}
	testwait.Wait(t, &wg, "the writers")
	evs, err := engines[0].EventsAfter(ctx, 0, 1000)
	if err != nil || len(evs) != writers*writes {
		t.Fatalf("logged %d events, %v; want %d", len(evs), err, writers*writes)
	}
	want := map[string]bool{}
	for _, e := range evs {
		for i := range subs {
			want[fmt.Sprintf("sub%d:%d", i, e.GetSeq())] = true
		}
	}
	timeout := time.After(60 * time.Second)
	for range want {
		select {
		case <-recv.seen:
		case <-timeout:
			recv.mu.Lock()
			t.Fatalf("%d of %d deliveries arrived", len(recv.got), len(want))
		}
	}
	// Every attempt settles after its answer: wait for the queues to empty.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := uint64(0)
		for i := range subs {
			st, err := engines[0].DeliveryState(ctx, fmt.Sprintf("sub%d", i), 10)
			pending, dead := st.Pending, st.Dead
			if err != nil || len(dead) != 0 {
				t.Fatalf("sub%d: dead %v, %v", i, dead, err)
			}
			left += pending
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still queued", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	testwait.Wait(t, &running, "the dispatchers to stop")
	t.Logf("settled by engine 0: %d, by engine 1: %d", settled[0].Load(), settled[1].Load())
	recv.mu.Lock()
	defer recv.mu.Unlock()
	var dup, extra []string
	for id, n := range recv.got {
		if n != 1 {
			dup = append(dup, fmt.Sprintf("%s×%d", id, n))
		}
		if !want[id] {
			extra = append(extra, id)
		}
	}
	sort.Strings(dup)
	if len(dup) > 0 || len(extra) > 0 || len(recv.got) != len(want) {
		t.Fatalf("%d distinct deliveries of %d; repeated %v; unexpected %v", len(recv.got), len(want), dup, extra)
	}
	list, err := engines[1].ListSubscriptions(ctx)
	if err != nil || len(list) != subs {
		t.Fatalf("%d subscriptions listed (%v), want %d", len(list), err, subs)
	}
	for _, s := range list {
		if s.Dispatched != writers*writes || s.Failed != 0 {
			t.Errorf("%s: dispatched %d, failed %d; want %d, 0", s.ID, s.Dispatched, s.Failed, writers*writes)
		}
	}
}

// A write on one engine that queues a delivery wakes a listener on
// another (after the wake-up every (re)connect gives), also after the
// listener's connection was cut.
func TestDeliveryWakeAcrossEngines(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})
	ctx, cancel := context.WithCancel(storagetest.Operator())
	defer cancel()
	wake := b.DeliveryWake(ctx)
	select {
	case <-wake: // connected and listening
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up on connecting")
	}
	if err := a.PutSubscription(ctx, &storage.Subscription{ID: "s", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:a", Scope: "*"}); err != nil {
		t.Fatal(err)
	}
	storeTitle(t, records.New(a), "queued for s")
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the other engine's write did not wake the listener")
	}
	// The listener's connection dropped: it reconnects and wakes at once
	// (what was sent meanwhile is lost), then hears writes again.
	var killed int
	err := a.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminated %d listeners, %v", killed, err)
	}
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up on reconnecting")
	}
	storeTitle(t, records.New(a), "queued after the reconnect")
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the reconnected listener did not hear the write")
	}
}

// Subscriptions made while another engine writes: each receives exactly
// the events logged after it (seq > FromSeq), however the writes and the
// subscription interleave (a write that matched against the old list is
// retried, or reads the new one).
func TestSubscribeDuringWrites(t *testing.T) {
	dsn := pgtest.DSN(t)
	writer, subscriber := openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})
	ctx := storagetest.Operator()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := records.New(writer).StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{
					Title: fmt.Sprintf("w%d n%d", w, i), Content: "c", Confidence: 1}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// grown waits until the other engine has logged n more events.
	var seen uint64
	grown := func(n uint64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			last, err := writer.LastSeq(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if last >= seen+n {
				seen = last
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the writers are stuck at seq %d", last)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var subs []*storage.Subscription
	for i := range 5 {
		grown(10)
		storeTitle(t, records.New(subscriber), fmt.Sprintf("from the subscriber %d", i)) // its own writes, matched from its copy
		sub := &storage.Subscription{ID: fmt.Sprintf("s%d", i), URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:a", Scope: "*"}
		if err := subscriber.PutSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	storeTitle(t, records.New(subscriber), "last")
	grown(10)
	close(stop)
	testwait.Wait(t, &wg, "the other engine's writers to stop")
	evs, err := writer.EventsAfter(ctx, 0, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		var want []int64
		for _, e := range evs {
			if e.GetSeq() > sub.FromSeq {
				want = append(want, int64(e.GetSeq()))
			}
		}
		rows, err := writer.pool.Query(ctx, `SELECT seq FROM deliveries WHERE subscription_id = $1 ORDER BY seq`, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
			t.Errorf("%s (from seq %d): %d deliveries, want %d\n got %v\nwant %v", sub.ID, sub.FromSeq, len(got), len(want), got, want)
		}
	}
	t.Logf("%d events, subscriptions from seqs %d…%d", len(evs), subs[0].FromSeq, subs[len(subs)-1].FromSeq)
}
