package wire

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// A cancelled call must answer with what happened. When a cancel tore the
// call down at every hop, a store whose write had reached the engine
// committed while the client heard "context canceled" (17 of 146 in one
// test), and a retried memory_notify sent its message twice. So a call is
// cancelled only up to the moment it hands a write to the engine: from
// then on it runs to its end, and its answer is its result. Before that, a
// cancel stops it and the answer says nothing was written.

// CancelledMessage answers a call cancelled before it handed a write to
// the engine.
const CancelledMessage = "cancelled before it wrote anything; nothing was written"

// inFlight is one tool call as its handler sees it: its context keeps the
// call's values and deadline, and is cancelled only through cancel, which
// does nothing once a write was handed off.
type inFlight struct {
	ctx     context.Context
	release func()

	mu        sync.Mutex
	cancelFn  context.CancelFunc
	cancelled bool
	handedOff bool
}

type inFlightKey struct{}

// newInFlight starts a call under parent (a gRPC request's context, whose
// cancellation now goes through cancel), with timeout when it is not 0.
func newInFlight(parent context.Context, timeout time.Duration) *inFlight {
	ctx, stopDeadline := context.WithoutCancel(parent), context.CancelFunc(func() {})
	if d, ok := parent.Deadline(); ok {
		ctx, stopDeadline = context.WithDeadline(ctx, d)
	}
	stopTimeout := context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, stopTimeout = context.WithTimeout(ctx, timeout)
	}
	f := &inFlight{}
	ctx, f.cancelFn = context.WithCancel(ctx)
	f.ctx = context.WithValue(ctx, inFlightKey{}, f)
	stopWatch := context.AfterFunc(parent, func() {
		if !errors.Is(parent.Err(), context.DeadlineExceeded) { // the copied deadline ends the call itself
			f.cancel()
		}
	})
	f.release = func() {
		stopWatch()
		f.cancelFn()
		stopTimeout()
		stopDeadline()
	}
	return f
}

// cancel stops the call unless it has handed a write to the engine.
func (f *inFlight) cancel() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.handedOff {
		f.cancelled = true
		f.cancelFn()
	}
}

// handOff reports whether a write may go to the engine: false once the
// call was cancelled; after true, cancel no longer stops the call.
func (f *inFlight) handOff() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancelled {
		return false
	}
	f.handedOff = true
	return true
}

// handOffWrites is the engine connection's interceptor: a write (any call
// but the reads below) of a cancelled tool call is refused before it is
// sent, and a write that is sent makes the call run to its end.
func handOffWrites(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if f, ok := ctx.Value(inFlightKey{}).(*inFlight); ok && !engineReads[method] && !f.handOff() {
		return status.Error(codes.Canceled, CancelledMessage)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// engineReads are the engine calls that change nothing, which a cancel may
// stop at any time. A call missing here counts as a write: it is never
// stopped once sent, which is always truthful (ListInbox is one: it may
// mark messages read; so is TouchMemories, which counts accesses).
var engineReads = map[string]bool{
	aimemoryv1.Engine_Health_FullMethodName:                   true,
	aimemoryv1.Memories_GetMemories_FullMethodName:            true,
	aimemoryv1.Memories_ShortIds_FullMethodName:               true,
	aimemoryv1.Memories_ListMemories_FullMethodName:           true,
	aimemoryv1.Memories_SearchMemories_FullMethodName:         true,
	aimemoryv1.Memories_Stats_FullMethodName:                  true,
	aimemoryv1.Corpus_TermStats_FullMethodName:                true,
	aimemoryv1.Corpus_RelatedTerms_FullMethodName:             true,
	aimemoryv1.Vectors_VectorStatus_FullMethodName:            true,
	aimemoryv1.Vectors_NearestByText_FullMethodName:           true,
	aimemoryv1.Models_Chat_FullMethodName:                     true,
	aimemoryv1.Graph_GetLinks_FullMethodName:                  true,
	aimemoryv1.Graph_Traverse_FullMethodName:                  true,
	aimemoryv1.Graph_LinkTimeline_FullMethodName:              true,
	aimemoryv1.Graph_GetEntityByAlias_FullMethodName:          true,
	aimemoryv1.Graph_CountNamespaces_FullMethodName:           true,
	aimemoryv1.Audit_ListAudit_FullMethodName:                 true,
	aimemoryv1.Audit_VerifyAudit_FullMethodName:               true,
	aimemoryv1.Governance_GetStandard_FullMethodName:          true,
	aimemoryv1.Governance_ListPending_FullMethodName:          true,
	aimemoryv1.Governance_ListAgents_FullMethodName:           true,
	aimemoryv1.Archive_GetArchived_FullMethodName:             true,
	aimemoryv1.Archive_ListArchived_FullMethodName:            true,
	aimemoryv1.Archive_ArchiveStats_FullMethodName:            true,
	aimemoryv1.Subscriptions_ListSubscriptions_FullMethodName: true,
}
