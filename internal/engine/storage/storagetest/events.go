package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The durable event log, the webhook delivery queue and the inboxes
// (storage.EventLog, storage.Subscriptions, storage.Messages).

// testEventLogResumeCursor: every committed change but a touch is logged
// with a seq, in commit order; a refused write logs nothing; EventsAfter
// resumes after any seq and LastSeq is the newest.
func testEventLogResumeCursor(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	a := Store(t, s, Mem("first", "x"))
	Store(t, s, Mem("second", "x"))
	if _, err := s.TouchMemories(ctx, &aimemoryv1.TouchMemoriesRequest{Ids: []string{a.Id}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("x", "c", InNS("_messages/bob"))}); !errors.Is(err, storage.ErrDenied) {
		t.Fatalf("guarded store: %v", err)
	}
	if _, err := s.DeleteMemories(ctx, &aimemoryv1.DeleteMemoriesRequest{Ids: []string{a.Id}}); err != nil {
		t.Fatal(err)
	}
	evs, err := s.EventsAfter(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"memory_store first", "memory_store second", "memory_delete first"}
	var got []string
	for i, e := range evs {
		got = append(got, e.GetType()+" "+e.GetTitle())
		if e.GetSeq() != uint64(i+1) || e.GetMemoryId() == "" || e.GetAt() == 0 {
			t.Errorf("event %d: %v, want seq %d", i, e, i+1)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("logged %q, want %q", got, want)
	}
	if last, err := s.LastSeq(ctx); last != 3 || err != nil {
		t.Errorf("LastSeq %d, %v", last, err)
	}
	if tail, _ := s.EventsAfter(ctx, 2, 100); len(tail) != 1 || tail[0].GetSeq() != 3 {
		t.Errorf("resume after 2: %v", tail)
	}
	if page, _ := s.EventsAfter(ctx, 0, 2); len(page) != 2 || page[1].GetSeq() != 2 {
		t.Errorf("limit 2: %v", page)
	}
}

// testDeliveriesQueuedWithTheWrite: a write's deliveries are queued in its
// own transaction, for the subscriptions made before it that it matches:
// none for a refused write, a filter that does not match, or another's
// inbox.
func testDeliveriesQueuedWithTheWrite(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	Store(t, s, Mem("before any subscription", "x"))
	for _, sub := range []*storage.Subscription{
		{ID: "all", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:alice", Scope: "*"},
		{ID: "proj", URL: "https://a.example/y", Events: []string{"memory_store"}, NamespaceFilter: "proj", CreatedBy: "ai:alice", Scope: "*"},
	} {
		if err := s.PutSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
		if sub.FromSeq != 1 {
			t.Errorf("%s: FromSeq %d, want 1", sub.ID, sub.FromSeq)
		}
	}
	Store(t, s, Mem("global one", "x"))
	Store(t, s, Mem("in proj", "x", InNS("proj")))
	if _, err := s.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: Mem("x", "c", InNS("_agents"))}); err == nil {
		t.Fatal("guarded store succeeded")
	}
	for _, to := range []string{"ai:bob", "ai:alice"} {
		if _, err := s.SendMessage(as("ai:carol"), &aimemoryv1.SendMessageRequest{To: to, Title: "for " + to, Payload: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	queue, _, err := s.DueDeliveries(ctx, 1<<62, 10, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range queue {
		got = append(got, d.SubscriptionID+":"+d.Event.GetTitle())
	}
	want := "all:global one,all:in proj,all:for ai:alice,proj:in proj"
	if strings.Join(got, ",") != want {
		t.Fatalf("queued %v, want %s", got, want)
	}
	if page, _, _ := s.DueDeliveries(ctx, 1<<62, 2, func(id string) bool { return id == "all" }, nil); len(page) != 1 || page[0].SubscriptionID != "proj" {
		t.Fatalf("with 'all' full: %v", page)
	}
}

// testDeliveryOutcomes: a retry is due again at its new time with its
// attempts and error; a dead letter is listed newest first; a delivered
// or dropped one is gone; the counters count them; only the owner deletes the
// subscription, which takes its queue and dead letters with it.
func testDeliveryOutcomes(t *testing.T, o Opener) {
	ctx := Operator()
	s, clk := o.open(t, storage.Options{})
	if err := s.PutSubscription(ctx, &storage.Subscription{ID: "s1", URL: "https://a.example/x", Events: []string{"*"}, CreatedBy: "ai:alice", Scope: "*", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		Store(t, s, Mem(fmt.Sprintf("note %d", i), "x"))
	}
	now := clk.Now().UnixNano()
	due, next, err := s.DueDeliveries(ctx, now, 10, nil, nil)
	if err != nil || len(due) != 5 || next != 0 {
		t.Fatalf("due %d, next %d, %v", len(due), next, err)
	}
	// A dropped one (its creator's grant no longer reads it) is gone, counted nowhere.
	if err := s.SettleDelivery(ctx, due[4].NextAt, due[4], storage.Dropped); err != nil {
		t.Fatal(err)
	}
	due = due[:4]
	// queued is the NextAt a delivery was queued under; d its new state.
	settle := func(queued int64, d *storage.Delivery, o storage.Outcome) {
		t.Helper()
		if err := s.SettleDelivery(ctx, queued, d, o); err != nil {
			t.Fatal(err)
		}
	}
	queued := due[0].NextAt
	due[0].Attempts, due[0].NextAt, due[0].LastError = 1, now+int64(time.Second), "receiver answered 502"
	settle(queued, due[0], storage.Retry)
	settle(due[1].NextAt, due[1], storage.Delivered)
	for _, d := range due[2:] {
		d.Attempts, d.LastError = 5, "gave up on "+d.Event.GetTitle()
		settle(d.NextAt, d, storage.Dead)
	}
	st, err := s.DeliveryState(ctx, "s1", 1)
	if err != nil || st.Pending != 1 || st.DeadCount != 2 || len(st.Dead) != 1 || st.Dead[0].GetLastError() != "gave up on note 3" || st.Dead[0].GetAttempts() != 5 ||
		st.Dispatched != 1 || st.Failed != 3 {
		t.Fatalf("state: %+v, %v", st, err)
	}
	if d, next, _ := s.DueDeliveries(ctx, now, 10, nil, nil); len(d) != 0 || next != now+int64(time.Second) {
		t.Fatalf("before the retry: %v, next %d", d, next)
	}
	d, _, _ := s.DueDeliveries(ctx, now+int64(time.Second), 10, nil, nil)
	if len(d) != 1 || d[0].Attempts != 1 || d[0].LastError != "receiver answered 502" || d[0].Event.GetTitle() != "note 0" {
		t.Fatalf("the retry: %v", d)
	}
	if busy, _, _ := s.DueDeliveries(ctx, now+int64(time.Second), 10, nil, func(string, uint64) bool { return true }); len(busy) != 0 {
		t.Fatalf("busy ones returned: %v", busy)
	}
	subs, err := s.ListSubscriptions(ctx)
	if err != nil || len(subs) != 1 || subs[0].Dispatched != 1 || subs[0].Failed != 3 {
		t.Fatalf("subscriptions %+v, %v", subs, err)
	}
	// Narrowing its grant rewrites it keeping its queue, dead letters and counters.
	if n, err := s.NarrowGrants(ctx, "ai:alice", "team-a"); n != 1 || err != nil {
		t.Fatalf("narrow: %d, %v", n, err)
	}
	if st, err := s.DeliveryState(ctx, "s1", 10); err != nil || st.Pending != 1 || st.DeadCount != 2 || st.Dispatched != 1 || st.Failed != 3 {
		t.Fatalf("state after narrowing: %+v, %v", st, err)
	}
	if subs, err := s.ListSubscriptions(ctx); err != nil || len(subs) != 1 || subs[0].Scope != "team-a" || subs[0].Dispatched != 1 || subs[0].Failed != 3 {
		t.Fatalf("subscriptions after narrowing %+v, %v", subs, err)
	}
	// Another's subscription is as a missing one.
	if ok, err := s.DeleteSubscription(ctx, "s1", "ai:mallory"); ok || err != nil {
		t.Fatalf("delete by another: %v, %v", ok, err)
	}
	if ok, err := s.DeleteSubscription(ctx, "s1", "ai:alice"); !ok || err != nil {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	if st, _ := s.DeliveryState(ctx, "s1", 10); st.Pending != 0 || st.DeadCount != 0 || st.Dispatched != 0 {
		t.Fatalf("after delete: %+v", st)
	}
	if ok, err := s.DeleteSubscription(ctx, "s1", "ai:alice"); ok || err != nil {
		t.Fatalf("delete again: %v, %v", ok, err)
	}
	settle(d[0].NextAt, d[0], storage.Delivered) // its subscription is gone: dropped
	if subs, _ := s.ListSubscriptions(ctx); len(subs) != 0 {
		t.Fatalf("subscriptions after delete: %v", subs)
	}
}

// testInbox: a message goes from the caller into the recipient's inbox as
// its own memory; only the recipient lists it; unread_only filters before
// the limit; mark_read marks what it returned; bad requests change nothing.
func testInbox(t *testing.T, o Opener) {
	s, clk := o.open(t, storage.Options{})
	send := func(from, to, title string) *aimemoryv1.Memory {
		t.Helper()
		clk.Add(time.Millisecond)
		resp, err := s.SendMessage(as(from), &aimemoryv1.SendMessageRequest{To: to, Title: title, Payload: "p " + title})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetMessage()
	}
	m1 := send("ai:alice", "ai:bob", "one")
	send("ai:carol", "ai:bob", "two")
	// A repeated title is a second message, stored as "one (2)"; the sender
	// is told the title it sent, not what the inbox held.
	if m3 := send("ai:alice", "ai:bob", "one"); m3.GetId() == m1.GetId() || m3.GetTitle() != "one" {
		t.Fatalf("repeat title: %v, want a second message, answered as 'one'", m3)
	}
	if m1.GetNamespace() != "_messages/ai:bob" || m1.GetCreatedBy() != "ai:alice" || m1.GetSource() != "notify" {
		t.Fatalf("message %v", m1)
	}
	list := func(who string, req *aimemoryv1.ListInboxRequest) string {
		t.Helper()
		resp, err := s.ListInbox(as(who), req)
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, m := range resp.GetMessages() {
			titles = append(titles, m.GetTitle())
		}
		return fmt.Sprintf("%s (%d unread)", strings.Join(titles, ","), resp.GetUnread())
	}
	for _, step := range []struct {
		who  string
		req  *aimemoryv1.ListInboxRequest
		want string
	}{
		{"ai:alice", &aimemoryv1.ListInboxRequest{}, " (0 unread)"},
		{"ai:bob", &aimemoryv1.ListInboxRequest{Limit: 1, MarkRead: true}, "one (2) (3 unread)"},
		{"ai:bob", &aimemoryv1.ListInboxRequest{UnreadOnly: true, Limit: 2}, "two,one (2 unread)"},
		{"ai:bob", &aimemoryv1.ListInboxRequest{}, "one (2),two,one (2 unread)"},
	} {
		if got := list(step.who, step.req); got != step.want {
			t.Fatalf("%s %v: %s, want %s", step.who, step.req, got, step.want)
		}
	}
	for _, tc := range []struct {
		ctx  context.Context
		req  *aimemoryv1.SendMessageRequest
		want string
	}{
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "../etc", Title: "t", Payload: "p"}, "to: must not contain '/' or '..'"},
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: " "}, "payload:"},
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: "p", Priority: 11}, "priority"},
		{as("ai:alice"), &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: "p", Tier: "forever"}, "tier"},
		{noCaller, &aimemoryv1.SendMessageRequest{To: "bob", Title: "t", Payload: "p"}, "caller's identity"},
	} {
		if _, err := s.SendMessage(tc.ctx, tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.req, err, tc.want)
		}
	}
	if _, err := s.ListInbox(noCaller, &aimemoryv1.ListInboxRequest{}); err == nil {
		t.Error("an inbox listed without a caller")
	}
	if _, err := s.ListInbox(as("ai:bob"), &aimemoryv1.ListInboxRequest{Limit: 201}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("limit 201: %v", err)
	}
	if got := list("ai:bob", &aimemoryv1.ListInboxRequest{}); got != "one (2),two,one (2 unread)" {
		t.Fatalf("refused calls changed bob's inbox: %s", got)
	}
	check(t, s)
}

// testNarrowGrants: a principal's later, narrower grant narrows the grant
// its subscriptions record; a wider one changes nothing; another
// principal's subscriptions are untouched; each keeps its start point;
// and matching follows it.
func testNarrowGrants(t *testing.T, o Opener) {
	ctx := Operator()
	s, _ := o.open(t, storage.Options{})
	Store(t, s, Mem("before", "x")) // the subscriptions start after it: FromSeq 1
	for _, sub := range []*storage.Subscription{
		{ID: "a1", URL: "https://a.example/1", Events: []string{"*"}, CreatedBy: "ai:alice", Family: "core", Scope: "team-a team-c"},
		{ID: "a2", URL: "https://a.example/2", Events: []string{"*"}, CreatedBy: "ai:alice", Family: "core", Scope: "team-c/x"},
		{ID: "b1", URL: "https://b.example/1", Events: []string{"*"}, CreatedBy: "ai:bob", Family: "core", Scope: "team-a"},
	} {
		if err := s.PutSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	scopes := func() string {
		t.Helper()
		subs, err := s.ListSubscriptions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, sub := range subs {
			out = append(out, sub.ID+"="+sub.Scope)
			if sub.FromSeq != 1 {
				t.Errorf("%s: FromSeq %d, want 1", sub.ID, sub.FromSeq)
			}
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		presented string
		changed   int
		want      string
	}{
		{"*", 0, "a1=team-a team-c,a2=team-c/x,b1=team-a"},
		{"team-c", 1, "a1=team-c,a2=team-c/x,b1=team-a"},
		{"team-c", 0, "a1=team-c,a2=team-c/x,b1=team-a"},
		{"team-a", 2, "a1=,a2=,b1=team-a"},
	} {
		if n, err := s.NarrowGrants(ctx, "ai:alice", tc.presented); err != nil || n != tc.changed {
			t.Errorf("narrow to %q: %d changed, %v; want %d", tc.presented, n, err, tc.changed)
		}
		if got := scopes(); got != tc.want {
			t.Errorf("after %q: %s, want %s", tc.presented, got, tc.want)
		}
	}
	Store(t, s, Mem("in a", "x", InNS("team-a")))
	due, _, err := s.DueDeliveries(ctx, 1<<62, 10, nil, nil)
	if err != nil || len(due) != 1 || due[0].SubscriptionID != "b1" {
		t.Errorf("after narrowing, deliveries %v, %v: want b1's alone", due, err)
	}
}
