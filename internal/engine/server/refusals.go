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
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
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

// Budgets shared by several callers: every call without a verified
// caller, and every principal past maxRefusers.
const (
	unauthenticatedKey = "\x00unauthenticated"
	overflowKey        = "\x00overflow"
)

// maxRefusalReason bounds the refusal message a record keeps.
const maxRefusalReason = 300

// Refusals appends every refusal the engine answers to its audit log:
// PermissionDenied with the verified caller, Unauthenticated with none.
// Governance's "queued for approval" (Aborted) is not a refusal. The
// append is made before the refusal is answered, within the budget of
// refusalLimit, so a client cannot flood the log.
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

// Unauthenticated is the interceptor placed before the caller check: it
// sees the calls the check refuses.
func (r *Refusals) Unauthenticated() []grpc.ServerOption {
	return r.interceptors(codes.Unauthenticated)
}

// Denied is the interceptor placed after the caller check: it sees the
// handlers' PermissionDenied with the caller in the context.
func (r *Refusals) Denied() []grpc.ServerOption {
	return r.interceptors(codes.PermissionDenied)
}

func (r *Refusals) interceptors(code codes.Code) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			if err != nil && status.Code(err) == code {
				r.record(ctx, info.FullMethod, err)
			}
			return resp, err
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			err := h(srv, ss)
			if err != nil && status.Code(err) == code {
				r.record(ss.Context(), info.FullMethod, err)
			}
			return err
		}),
	}
}

// record appends one refusal, if the budget allows it.
func (r *Refusals) record(ctx context.Context, method string, err error) {
	c, known := caller.FromContext(ctx)
	event, key := EventDenied, c.Principal
	if !known || status.Code(err) == codes.Unauthenticated {
		c, event, key = caller.Caller{}, EventUnauthenticated, unauthenticatedKey
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
