package pgstore

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/storage/storagetest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// TestDifferential's operations on the event log, the delivery queue and
// the inboxes (one engine: seqs and claims are deterministic).

var principals = []string{"ai:alice", "ai:bob", ""}

func (d *differ) eventOp() (string, func(storage.Backend) answer) {
	ctx := storagetest.Operator()
	who := func() (string, context.Context) {
		p := principals[d.rng.IntN(len(principals))]
		if p == "" {
			return "no caller", ctx
		}
		return p, caller.NewContext(ctx, caller.Caller{Principal: p, Scope: caller.AllNamespaces})
	}
	switch r := d.rng.IntN(100); {
	case r < 25:
		from, fctx := who()
		to := principals[d.rng.IntN(2)]
		if d.rng.IntN(8) == 0 {
			to = "../" + to // refused
		}
		req := &aimemoryv1.SendMessageRequest{To: to, Title: d.text(2), Payload: d.text(6)}
		return fmt.Sprintf("send %s → %s %q", from, to, req.Title), func(s storage.Backend) answer {
			r, err := s.SendMessage(fctx, req)
			if err == nil {
				d.nameMemory(backendIndex(s), r.GetMessage().GetId())
			}
			return answer{msg: r, err: err}
		}
	case r < 45:
		p, pctx := who()
		req := &aimemoryv1.ListInboxRequest{UnreadOnly: d.rng.IntN(2) == 0, MarkRead: d.rng.IntN(3) == 0, Limit: uint32(d.rng.IntN(5))}
		return fmt.Sprintf("inbox of %s %v", p, req), func(s storage.Backend) answer {
			r, err := s.ListInbox(pctx, req)
			return answer{msg: r, err: err}
		}
	case r < 65:
		after, limit := uint64(d.rng.IntN(40)), 1+d.rng.IntN(20)
		return fmt.Sprintf("events after %d limit %d", after, limit), func(s storage.Backend) answer {
			evs, err := s.EventsAfter(ctx, after, limit)
			last, lerr := s.LastSeq(ctx)
			var b strings.Builder
			fmt.Fprintf(&b, "last %d %v;", last, lerr)
			for _, e := range evs {
				b.WriteString(prototext.Format(e) + ";")
			}
			return answer{msg: wrapperspb.String(b.String()), err: err}
		}
	case r < 72:
		sub := &storage.Subscription{ID: fmt.Sprintf("sub%d", d.rng.IntN(3)), URL: "https://a.example/x", Events: []string{"*"},
			CreatedBy: principals[d.rng.IntN(2)], Scope: "*", CreatedAt: int64(d.rng.IntN(3))}
		if d.rng.IntN(2) == 0 {
			sub.Events, sub.NamespaceFilter = []string{"memory_store", "memory_update"}, namespaces[d.rng.IntN(len(namespaces))]
		}
		return fmt.Sprintf("subscribe %+v", *sub), func(s storage.Backend) answer {
			c := *sub
			err := s.PutSubscription(ctx, &c)
			list, lerr := s.ListSubscriptions(ctx)
			return answer{msg: wrapperspb.String(fmt.Sprintf("from %d; %+v %v", c.FromSeq, subsText(list), lerr)), err: err}
		}
	case r < 76:
		id, owner := fmt.Sprintf("sub%d", d.rng.IntN(3)), principals[d.rng.IntN(2)]
		return fmt.Sprintf("unsubscribe %s by %s", id, owner), func(s storage.Backend) answer {
			ok, err := s.DeleteSubscription(ctx, id, owner)
			return answer{msg: wrapperspb.Bool(ok), err: err}
		}
	default:
		limit, outcome := 1+d.rng.IntN(4), storage.Outcome(d.rng.IntN(3))
		return fmt.Sprintf("dispatch %d as %v", limit, outcome), func(s storage.Backend) answer {
			at := d.now().UnixNano()
			due, next, err := s.DueDeliveries(ctx, at, limit, nil, nil)
			if err != nil {
				return answer{msg: nil, err: err}
			}
			var b strings.Builder
			fmt.Fprintf(&b, "next %d;", next)
			for _, q := range due {
				queued := q.NextAt
				fmt.Fprintf(&b, "%s:%d attempts %d %s;", q.SubscriptionID, q.Event.GetSeq(), q.Attempts, q.LastError)
				q.Attempts++
				q.LastError = fmt.Sprintf("attempt %d", q.Attempts)
				q.NextAt = at + int64(q.Attempts)
				if err := s.SettleDelivery(ctx, queued, q, outcome); err != nil {
					return answer{msg: nil, err: err}
				}
			}
			for i := range 3 {
				st, err := s.DeliveryState(ctx, fmt.Sprintf("sub%d", i), 3)
				pending, dead, n := st.Pending, st.Dead, st.DeadCount
				fmt.Fprintf(&b, "sub%d pending %d dead %d %v;", i, pending, n, err)
				for _, dl := range dead {
					b.WriteString(prototext.Format(dl) + ";")
				}
			}
			list, lerr := s.ListSubscriptions(ctx)
			fmt.Fprintf(&b, "%v %v", subsText(list), lerr)
			return answer{msg: wrapperspb.String(b.String())}
		}
	}
}

// backendIndex is 0 for bbolt, 1 for postgres.
func backendIndex(s storage.Backend) int {
	if _, ok := storage.As[*Store](s); ok {
		return 1
	}
	return 0
}

func subsText(list []*storage.Subscription) string {
	var b strings.Builder
	for _, s := range list {
		fmt.Fprintf(&b, "%s by %s from %d dispatched %d failed %d;", s.ID, s.CreatedBy, s.FromSeq, s.Dispatched, s.Failed)
	}
	return b.String()
}
