package pgstore

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/ops"
	"github.com/ai-memory/ai-memory/internal/engine/storage/pgstore/pgtest"
	"github.com/ai-memory/ai-memory/internal/engine/storage/records"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	"github.com/ai-memory/ai-memory/internal/testwait"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// boltstore's own tests of the event log, the delivery queue and the
// inboxes (boltstore/events_log_test.go), on PostgreSQL, and the parts
// only a shared database has: commits out of seq order, several stores.

type publishedEvents struct{ got []*aimemoryv1.Event }

func (p *publishedEvents) Publish(e *aimemoryv1.Event) { p.got = append(p.got, e) }

// openAt opens a store on dsn, closed when t ends.
func openAt(t testing.TB, dsn string, opts storage.Options) *Store {
	t.Helper()
	s, err := Open(storagetest.Operator(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func storeTitle(t testing.TB, s storagetest.Storer, title string) *aimemoryv1.Memory {
	t.Helper()
	resp, err := s.StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: title, Content: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetMemory()
}

// Events are logged in their write's transaction, numbered in commit
// order, survive a reopen, and the published copy carries the same seq.
func TestEventLogIsDurableAndNumbered(t *testing.T) {
	dsn := pgtest.DSN(t)
	pub := &publishedEvents{}
	s := openAt(t, dsn, storage.Options{Events: pub})
	a := storeTitle(t, records.New(s), "first")
	storeTitle(t, records.New(s), "second")
	if _, err := records.New(s).TouchMemories(storagetest.Operator(), &aimemoryv1.TouchMemoriesRequest{Ids: []string{a.GetId()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := records.New(s).DeleteMemories(storagetest.Operator(), &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.GetId()}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, dsn, storage.Options{Events: pub})
	evs, err := s.EventsAfter(storagetest.Operator(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"memory_store", "memory_store", "memory_delete"} // no touch
	if len(evs) != len(want) {
		t.Fatalf("logged %d events %v, want %v", len(evs), evs, want)
	}
	for i, e := range evs {
		if e.GetType() != want[i] || e.GetSeq() != uint64(i+1) || e.GetTitle() == "" {
			t.Errorf("event %d = %v, want %s seq %d with a title", i, e, want[i], i+1)
		}
	}
	if last, _ := s.LastSeq(storagetest.Operator()); last != 3 {
		t.Errorf("LastSeq %d", last)
	}
	if tail, _ := s.EventsAfter(storagetest.Operator(), 2, 100); len(tail) != 1 || tail[0].GetSeq() != 3 {
		t.Errorf("resume after 2: %v", tail)
	}
	var seqs []uint64
	for _, e := range pub.got {
		seqs = append(seqs, e.GetSeq())
	}
	if len(seqs) != 4 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 0 || seqs[3] != 3 {
		t.Errorf("published seqs %v, want [1 2 0 3] (a touch is live only)", seqs)
	}
}

// A refused write logs nothing, and its seq is not used up.
func TestRefusedWriteLogsNoEvent(t *testing.T) {
	s := open(t, storage.Options{})
	storeTitle(t, records.New(s), "ok")
	_, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{Title: "x", Content: "c", Namespace: "_messages/bob"}})
	if !errors.Is(err, storage.ErrDenied) {
		t.Fatalf("guarded store: %v", err)
	}
	storeTitle(t, records.New(s), "ok too")
	evs, _ := s.EventsAfter(storagetest.Operator(), 0, 10)
	if len(evs) != 2 || evs[1].GetSeq() != 2 {
		t.Fatalf("events %v, want seqs 1 and 2", evs)
	}
}

func TestEventLogRetention(t *testing.T) {
	old := eventRetention
	eventRetention = 3
	defer func() { eventRetention = old }()
	s := open(t, storage.Options{})
	for _, title := range []string{"a", "b", "c", "d", "e"} {
		storeTitle(t, records.New(s), title)
	}
	evs, _ := s.EventsAfter(storagetest.Operator(), 0, 10)
	if len(evs) != 3 || evs[0].GetSeq() != 3 || evs[2].GetSeq() != 5 {
		t.Fatalf("retained %v, want seqs 3..5", evs)
	}
}

// holdCommit makes the next write whose events include title stop just
// before its commit (its seqs taken) until release is called; held is
// closed when it stops there.
func holdCommit(t *testing.T, title string) (held chan struct{}, release func()) {
	held, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release) // a failed test must not leave the write hanging
	var done atomic.Bool
	beforeCommit = func(w *writeTx) error {
		for _, e := range w.events {
			if e.GetTitle() == title && done.CompareAndSwap(false, true) {
				close(held)
				<-gate
			}
		}
		return nil
	}
	t.Cleanup(func() { beforeCommit = nil })
	return held, release
}

// waitBlockedOrDone waits until a backend of s's database waits on a
// lock, or done has a result (which it leaves for the caller).
func waitBlockedOrDone(t *testing.T, s *Store, done chan error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(done) == 0 {
		var waiting int
		err := s.pool.QueryRow(storagetest.Operator(),
			`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the second write neither waits on a lock nor returns")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two engines' writes: the first takes its seq and stops before its
// commit; the second, on the other engine, cannot take a seq (and commit
// before it) until the first commits. A reader polling EventsAfter
// meanwhile sees neither, then both in seq order: its cursor never
// passes a seq that commits later.
func TestEventCursorNeverSkipsALateCommit(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})
	storeTitle(t, records.New(a), "before")
	held, release := holdCommit(t, "slow")
	slow, fast := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := records.New(a).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "slow", Content: "c"}})
		slow <- err
	}()
	testwait.Recv(t, held, "the slow write to stop before its commit")
	go func() {
		_, err := records.New(b).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "fast", Content: "c"}})
		fast <- err
	}()
	waitBlockedOrDone(t, a, fast) // the fast write waits for the lock on event_lock

	cursor := uint64(0)
	read := func() []string {
		evs, err := b.EventsAfter(storagetest.Operator(), cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, e := range evs {
			if e.GetSeq() <= cursor {
				t.Fatalf("seq %d at cursor %d", e.GetSeq(), cursor)
			}
			cursor = e.GetSeq()
			titles = append(titles, e.GetTitle())
		}
		return titles
	}
	if got := read(); strings.Join(got, ",") != "before" {
		t.Fatalf("while the first write is open: %v, want [before]", got)
	}
	select {
	case err := <-fast:
		t.Fatalf("the second write committed before the first: %v", err)
	default:
	}
	release()
	if err := testwait.Recv(t, slow, "the slow write to commit"); err != nil {
		t.Fatal(err)
	}
	if err := testwait.Recv(t, fast, "the fast write to commit"); err != nil {
		t.Fatal(err)
	}
	if got := read(); strings.Join(got, ",") != "slow,fast" {
		t.Fatalf("after both commits: %v, want [slow fast]", got)
	}
}

// A write that rolls back after taking its seq leaves a gap that never
// fills, and never holds the log up.
func TestRolledBackSeqIsAGap(t *testing.T) {
	s := open(t, storage.Options{})
	storeTitle(t, records.New(s), "one")
	beforeCommit = func(w *writeTx) error {
		if len(w.events) > 0 && w.events[0].GetTitle() == "doomed" {
			return errors.New("doomed")
		}
		return nil
	}
	t.Cleanup(func() { beforeCommit = nil })
	if _, err := records.New(s).StoreMemory(storagetest.Operator(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "doomed", Content: "c"}}); err == nil {
		t.Fatal("doomed write committed")
	}
	storeTitle(t, records.New(s), "three")
	evs, err := s.EventsAfter(storagetest.Operator(), 1, 10)
	if err != nil || len(evs) != 1 || evs[0].GetSeq() != 3 || evs[0].GetTitle() != "three" {
		t.Fatalf("after the gap: %v, %v; want seq 3 'three'", evs, err)
	}
}

// The delivery lifecycle on one store: a subscription receives only
// events after it; a claimed delivery is not handed to another store
// until its lease ends; retry, dead letter and delivered outcomes update
// the queue, the dead letters and the counters; delete removes them all,
// and only for its owner.
func TestDeliveryLifecycle(t *testing.T) {
	dsn := pgtest.DSN(t)
	s, other := openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})
	ctx := storagetest.Operator()
	storeTitle(t, records.New(s), "before the subscription")
	sub := &storage.Subscription{ID: "sub1", URL: "https://a.example/x", Events: []string{"memory_store"}, CreatedBy: "ai:alice", Scope: "*", CreatedAt: 5}
	if err := s.PutSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if sub.FromSeq != 1 {
		t.Fatalf("FromSeq %d, want 1", sub.FromSeq)
	}
	for _, title := range []string{"a", "b", "c"} {
		storeTitle(t, records.New(other), title) // queued by the other engine's writes too
	}
	now := time.Now().UnixNano() // the stores' clock: every delivery is due
	due, next, err := s.DueDeliveries(ctx, now, 2, nil, nil)
	if err != nil || len(due) != 2 || due[0].Event.GetTitle() != "a" || due[1].Event.GetTitle() != "b" {
		t.Fatalf("due %v, %v", due, err)
	}
	// The other store sees only what s did not claim, and when s's claim ends.
	od, onext, err := other.DueDeliveries(ctx, now, 10, nil, nil)
	if err != nil || len(od) != 1 || od[0].Event.GetTitle() != "c" || onext != now+claimLease {
		t.Fatalf("other's due %v, next %d (want %d), %v", od, onext, now+claimLease, err)
	}
	if next != 0 {
		t.Fatalf("next %d with nothing else queued", next)
	}
	// s sees its own claims again (its dispatcher passes them over as busy).
	again, _, _ := s.DueDeliveries(ctx, now, 10, nil, func(_ string, seq uint64) bool { return seq == due[0].Event.GetSeq() })
	if len(again) != 1 || again[0].Event.GetTitle() != "b" {
		t.Fatalf("s's own claims again: %v", again)
	}
	// A settle by a store not holding the claim is ignored.
	if err := other.SettleDelivery(ctx, now, due[0], storage.Delivered); err != nil {
		t.Fatal(err)
	}
	a := due[0]
	a.Attempts, a.NextAt, a.LastError = 1, now+100, "receiver answered 502"
	if err := s.SettleDelivery(ctx, now, a, storage.Retry); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleDelivery(ctx, now, due[1], storage.Delivered); err != nil {
		t.Fatal(err)
	}
	od[0].Attempts, od[0].LastError = 5, "gave up"
	if err := other.SettleDelivery(ctx, now, od[0], storage.Dead); err != nil {
		t.Fatal(err)
	}
	st, err := s.DeliveryState(ctx, "sub1", 10)
	pending, dead, deadCount := st.Pending, st.Dead, st.DeadCount
	if err != nil || pending != 1 || deadCount != 1 || len(dead) != 1 || dead[0].GetLastError() != "gave up" || dead[0].GetAttempts() != 5 {
		t.Fatalf("state: pending %d, dead %v (%d), %v", pending, dead, deadCount, err)
	}
	// The retried one is due again at its NextAt, on either store.
	if d, next, _ := other.DueDeliveries(ctx, now, 10, nil, nil); len(d) != 0 || next != now+100 {
		t.Fatalf("before its retry: %v, next %d", d, next)
	}
	d, _, _ := other.DueDeliveries(ctx, now+100, 10, nil, nil)
	if len(d) != 1 || d[0].Attempts != 1 || d[0].LastError != "receiver answered 502" {
		t.Fatalf("retry due: %v", d)
	}
	subs, err := s.ListSubscriptions(ctx)
	if err != nil || len(subs) != 1 || subs[0].Dispatched != 1 || subs[0].Failed != 2 || subs[0].FromSeq != 1 {
		t.Fatalf("subscriptions %+v, %v", subs, err)
	}
	if ok, err := records.New(s).DeleteSubscription(ctx, "sub1", "ai:mallory"); ok || err != nil { // as a missing one
		t.Fatalf("delete by another: %v, %v", ok, err)
	}
	if ok, err := records.New(s).DeleteSubscription(ctx, "sub1", "ai:alice"); !ok || err != nil {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if ok, err := records.New(s).DeleteSubscription(ctx, "sub1", "ai:alice"); ok || err != nil {
		t.Fatalf("delete again: %v, %v", ok, err)
	}
	var left int
	s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM deliveries) + (SELECT count(*) FROM dead_letters) + (SELECT count(*) FROM subscription_stats)`).Scan(&left)
	if left != 0 {
		t.Fatalf("%d rows left after the delete", left)
	}
	// A settle of a delivery whose subscription is gone is dropped quietly.
	if err := other.SettleDelivery(ctx, now, d[0], storage.Delivered); err != nil {
		t.Fatal(err)
	}
}

// Dead letters are kept to MaxDeadLetters per subscription, newest first.
func TestDeadLettersNewestFirst(t *testing.T) {
	s := open(t, storage.Options{})
	ctx := storagetest.Operator()
	if err := s.PutSubscription(ctx, &storage.Subscription{ID: "s", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:a", Scope: "*"}); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"a", "b", "c"} {
		storeTitle(t, records.New(s), title)
	}
	due, _, _ := s.DueDeliveries(ctx, 1<<62, 10, nil, nil)
	for _, d := range due {
		if err := s.SettleDelivery(ctx, 1<<62, d, storage.Dead); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.DeliveryState(ctx, "s", 2)
	dead, n := st.Dead, st.DeadCount
	if err != nil || n != 3 || len(dead) != 2 || dead[0].GetSeq() != 3 || dead[1].GetSeq() != 2 {
		t.Fatalf("dead %v (%d), %v", dead, n, err)
	}
}

// Engines share one webhook key: the first binds the database to its
// fingerprint; another with a different key is refused with the fix, and
// that store refuses sealed subscriptions.
func TestSealKeyBinding(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})
	ctx := storagetest.Operator()
	if err := a.BindSealKey(ctx, "aaaa"); err != nil {
		t.Fatal(err)
	}
	if err := a.BindSealKey(ctx, "aaaa"); err != nil {
		t.Fatal(err)
	}
	err := b.BindSealKey(ctx, "bbbb")
	var mismatch *storage.SealKeyMismatchError
	if !errors.As(err, &mismatch) || mismatch.Database != "aaaa" || !strings.Contains(err.Error(), "copy webhook.key") {
		t.Fatalf("second key: %v", err)
	}
	sub := &storage.Subscription{ID: "s", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:a", Scope: "*", SealedSecret: []byte("sealed")}
	if err := b.PutSubscription(ctx, sub); !errors.As(err, &mismatch) {
		t.Fatalf("sealed subscription through the mismatched engine: %v", err)
	}
	if err := a.PutSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
}

// Subscriptions through export and import: exported in id order without
// their seqs and counters; an imported one starts after the importing
// write's own events; importing it again is unchanged, with another
// target refused; a bad one is refused and writes nothing.
func TestSubscriptionsExportImport(t *testing.T) {
	s := open(t, storage.Options{})
	ctx := storagetest.Operator()
	storeTitle(t, records.New(s), "before")
	for _, id := range []string{"b", "a"} {
		if err := s.PutSubscription(ctx, &storage.Subscription{ID: id, URL: "https://a.example/" + id, Events: []string{"*"},
			CreatedBy: "ai:alice", Scope: "*", CreatedAt: 7, SealedSecret: []byte("sealed " + id)}); err != nil {
			t.Fatal(err)
		}
	}
	var exported []*aimemoryv1.WebhookSubscription
	for _, r := range exportedKinds(t, s, ops.KindSubscription) {
		exported = append(exported, r.GetSubscription())
	}
	if len(exported) != 2 || exported[0].GetId() != "a" || string(exported[1].GetSealedSecret()) != "sealed b" {
		t.Fatalf("exported %v", exported)
	}

	dst := open(t, storage.Options{})
	storeTitle(t, records.New(dst), "already there")
	var outcomes []string
	imp := func(memory string, subs ...*aimemoryv1.WebhookSubscription) error {
		var recs []*aimemoryv1.ExportRecord
		if memory != "" { // the import's own write, in its transaction: no delivery for it
			recs = append(recs, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: &aimemoryv1.Memory{
				Id: memory, Title: "imported", Content: "c", Namespace: "global", Tier: "long", Priority: 5, Confidence: 1,
				CreatedAt: 1, UpdatedAt: 1, CreatedBy: "ai:seed"}}})
		}
		for _, sub := range subs {
			recs = append(recs, &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Subscription{Subscription: sub}})
		}
		res, err := records.New(dst).Import(ctx, recs)
		outcomes = nil
		for _, r := range res[len(recs)-len(subs):] {
			o := r.GetOutcome()
			if o == "refused" {
				o = "refused: " + r.GetError()
			}
			outcomes = append(outcomes, o)
		}
		return err
	}
	bad := &aimemoryv1.WebhookSubscription{Id: "c", CreatedBy: "ai:alice"}
	if err := imp("0190aaaa-0000-7000-8000-000000000001", exported[0], exported[1], bad); err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 3 || outcomes[0] != "created" || outcomes[1] != "created" || !strings.Contains(outcomes[2], "url and events must be set") {
		t.Fatalf("outcomes %q", outcomes)
	}
	subs, _ := dst.ListSubscriptions(ctx)
	last, _ := dst.LastSeq(ctx)
	if len(subs) != 2 || subs[0].FromSeq != last || last != 2 {
		t.Fatalf("imported %+v, last seq %d: want 2 starting after seq 2", subs, last)
	}
	if due, _, _ := dst.DueDeliveries(ctx, 1<<62, 10, nil, nil); len(due) != 0 {
		t.Fatalf("the import's own write queued %v", due)
	}
	storeTitle(t, records.New(dst), "after")
	if due, _, _ := dst.DueDeliveries(ctx, 1<<62, 10, nil, nil); len(due) != 2 || due[0].Event.GetTitle() != "after" {
		t.Fatalf("after the import: %v", due)
	}
	other := proto.Clone(exported[0]).(*aimemoryv1.WebhookSubscription)
	other.Url = "https://elsewhere.example/"
	if err := imp("", exported[0], other); err != nil {
		t.Fatal(err)
	}
	if outcomes[0] != "unchanged" || !strings.Contains(outcomes[1], "import does not overwrite") {
		t.Fatalf("again: %q", outcomes)
	}
}

// An engine that dies mid-attempt leaves its claims: another store takes
// the delivery over once the lease has run out, and the dead one's late
// settle (had it come back) changes nothing.
func TestExpiredClaimTakenOver(t *testing.T) {
	dsn := pgtest.DSN(t)
	dead, live := openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})
	ctx := storagetest.Operator()
	if err := dead.PutSubscription(ctx, &storage.Subscription{ID: "s", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:a", Scope: "*"}); err != nil {
		t.Fatal(err)
	}
	storeTitle(t, records.New(dead), "claimed, never settled")
	now := time.Now().UnixNano()
	claimed, _, err := dead.DueDeliveries(ctx, now, 10, nil, nil)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %v, %v", claimed, err)
	}
	if d, next, _ := live.DueDeliveries(ctx, now+claimLease-1, 10, nil, nil); len(d) != 0 || next != now+claimLease {
		t.Fatalf("within the lease: %v, next %d", d, next)
	}
	d, _, err := live.DueDeliveries(ctx, now+claimLease, 10, nil, nil)
	if err != nil || len(d) != 1 || d[0].Event.GetSeq() != claimed[0].Event.GetSeq() {
		t.Fatalf("after the lease: %v, %v", d, err)
	}
	if err := dead.SettleDelivery(ctx, now, claimed[0], storage.Delivered); err != nil {
		t.Fatal(err)
	}
	if st, _ := live.DeliveryState(ctx, "s", 1); st.Pending != 1 {
		t.Fatalf("the late settle of the old claim removed the delivery (pending %d)", st.Pending)
	}
	if err := live.SettleDelivery(ctx, now+claimLease, d[0], storage.Delivered); err != nil {
		t.Fatal(err)
	}
	subs, _ := live.ListSubscriptions(ctx)
	if st, _ := live.DeliveryState(ctx, "s", 1); st.Pending != 0 || subs[0].Dispatched != 1 {
		t.Fatalf("after the takeover's settle: pending %d, dispatched %d", st.Pending, subs[0].Dispatched)
	}
}

// A new dispatch leader takes over its predecessor's claims at once
// (TakeOverClaims), within the lease, and leaves its own alone.
func TestNewLeaderTakesOverClaims(t *testing.T) {
	dsn := pgtest.DSN(t)
	dead, leader := openAt(t, dsn, storage.Options{}), openAt(t, dsn, storage.Options{})
	ctx := storagetest.Operator()
	if err := dead.PutSubscription(ctx, &storage.Subscription{ID: "s", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:a", Scope: "*"}); err != nil {
		t.Fatal(err)
	}
	storeTitle(t, records.New(dead), "claimed by the old leader")
	now := time.Now().UnixNano()
	claimed, _, err := dead.DueDeliveries(ctx, now, 10, nil, nil)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %v, %v", claimed, err)
	}
	if d, _, _ := leader.DueDeliveries(ctx, now, 10, nil, nil); len(d) != 0 {
		t.Fatalf("the claim did not hold: %v", d)
	}
	if n, err := leader.TakeOverClaims(ctx); err != nil || n != 1 {
		t.Fatalf("took over %d, %v", n, err)
	}
	d, _, err := leader.DueDeliveries(ctx, now, 10, nil, nil)
	if err != nil || len(d) != 1 || d[0].Event.GetSeq() != claimed[0].Event.GetSeq() {
		t.Fatalf("within the lease, after the takeover: %v, %v", d, err)
	}
	if n, err := leader.TakeOverClaims(ctx); err != nil || n != 0 {
		t.Fatalf("a second takeover released its own claim: %d, %v", n, err)
	}
}
