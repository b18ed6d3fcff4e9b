package server

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/caller"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Audit events of the engine's own refusals.
const (
	EventDenied          = "access_denied"   // PermissionDenied: scope, guarded namespace, governance deny, host-only call
	EventUnauthenticated = "unauthenticated" // no, a bad, an expired or a replayed assertion
)

// Refusal limits: each principal (all unauthenticated calls count as one)
// may cause RefusalBurst records at once and RefusalRate a second after
// that; all principals together, ten times as many. What the limits hold
// back is counted into the principal's next record (suppressed).
const (
	RefusalRate  = 1
	RefusalBurst = 20
	// maxRefusers bounds the principals whose budgets are kept; past it the
	// ones with nothing held back and a full budget are forgotten.
	maxRefusers = 4096
)

// Budgets shared by several callers: every call refused before a caller
// was verified, and every principal past maxRefusers.
const (
	unauthenticatedKey = "\x00unauthenticated"
	overflowKey        = "\x00overflow"
)

// maxRefusalReason bounds the refusal message a record keeps.
const maxRefusalReason = 300

// Refusals appends every refusal the engine answers to its audit log:
// PermissionDenied and Unauthenticated, with the caller when one was
// verified. Governance's "queued for approval" (Aborted) is not a
// refusal. Its interceptor (Record) sits before the caller check, so it
// sees what that check refuses too; a second one (NoteCaller), after the
// check, only hands it the verified caller. The append is made before the
// refusal is answered, within refusalLimit's budgets, so a client cannot
// flood the log.
type Refusals struct {
	log   *audit.Log
	slog  *slog.Logger
	limit *refusalLimit
}

// NewRefusals audits refusals into l; logger reports appends that fail.
func NewRefusals(l *audit.Log, logger *slog.Logger) *Refusals {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Refusals{log: l, slog: logger, limit: newRefusalLimit(time.Now)}
}

// callerSlot carries the verified caller from NoteCaller back out to Record.
type callerSlot struct {
	c  caller.Caller
	ok bool
}

type callerSlotKey struct{}

// Record is the interceptor placed before the caller check: it audits
// every refusal answered below it.
func (r *Refusals) Record() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			slot := &callerSlot{}
			resp, err := h(context.WithValue(ctx, callerSlotKey{}, slot), req)
			r.audit(ctx, info.FullMethod, err, slot)
			return resp, err
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			slot := &callerSlot{}
			err := h(srv, &slotStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), callerSlotKey{}, slot)})
			r.audit(ss.Context(), info.FullMethod, err, slot)
			return err
		}),
	}
}

// NoteCaller is the interceptor placed after the caller check: it tells
// Record whom the call was verified for.
func (r *Refusals) NoteCaller() []grpc.ServerOption {
	note := func(ctx context.Context) {
		if slot, ok := ctx.Value(callerSlotKey{}).(*callerSlot); ok {
			slot.c, slot.ok = caller.FromContext(ctx)
		}
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			note(ctx)
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			note(ss.Context())
			return h(srv, ss)
		}),
	}
}

type slotStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *slotStream) Context() context.Context { return s.ctx }

// audit appends err if it is a refusal and the budget allows it.
func (r *Refusals) audit(ctx context.Context, method string, err error, slot *callerSlot) {
	event := ""
	switch status.Code(err) {
	case codes.PermissionDenied:
		event = EventDenied
	case codes.Unauthenticated:
		event = EventUnauthenticated
	default:
		return
	}
	c, key := slot.c, slot.c.Principal
	if !slot.ok {
		c, key = caller.Caller{}, unauthenticatedKey
	}
	suppressed, ok := r.limit.admit(key)
	if !ok {
		return
	}
	reason := status.Convert(err).Message()
	if len(reason) > maxRefusalReason {
		reason = strings.ToValidUTF8(reason[:maxRefusalReason], "") + "…"
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, aerr := r.log.Append(actx, &aimemoryv1.AuditRecord{AgentId: c.Principal, Event: event, Family: c.Family,
		Tool: strings.TrimPrefix(method, "/aimemory.v1."), Reason: reason, Suppressed: suppressed})
	if aerr != nil {
		r.slog.Error("refusal not audited", "event", event, "principal", c.Principal, "method", method, "err", aerr)
	}
}

// refusalLimit is a token bucket per principal and one for everybody.
type refusalLimit struct {
	now func() time.Time

	mu  sync.Mutex
	all *rate.Limiter
	per map[string]*refuser
}

type refuser struct {
	budget     *rate.Limiter
	suppressed uint64 // refusals held back since this principal's last record
}

func newRefusalLimit(now func() time.Time) *refusalLimit {
	return &refusalLimit{now: now, all: rate.NewLimiter(10*RefusalRate, 10*RefusalBurst), per: map[string]*refuser{}}
}

// admit takes one refusal of key from the budgets: ok when it is to be
// recorded, with how many of key's were held back before it.
func (l *refusalLimit) admit(key string) (suppressed uint64, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.per[key]; !ok && len(l.per) >= maxRefusers {
		l.forgetIdle(now)
		if len(l.per) >= maxRefusers {
			key = overflowKey // every principal past the bound shares one budget
		}
	}
	p := l.per[key]
	if p == nil {
		p = &refuser{budget: rate.NewLimiter(RefusalRate, RefusalBurst)}
		l.per[key] = p
	}
	if p.budget.TokensAt(now) < 1 || l.all.TokensAt(now) < 1 {
		p.suppressed++
		return 0, false
	}
	p.budget.AllowN(now, 1)
	l.all.AllowN(now, 1)
	suppressed, p.suppressed = p.suppressed, 0
	return suppressed, true
}

// forgetIdle drops the principals with nothing held back and a full
// budget: forgetting them changes nothing.
func (l *refusalLimit) forgetIdle(now time.Time) {
	for k, p := range l.per {
		if p.suppressed == 0 && p.budget.TokensAt(now) >= RefusalBurst {
			delete(l.per, k)
		}
	}
}
