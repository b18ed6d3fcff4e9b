package sdk

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// EngineError turns an Engine RPC failure into a message an agent can act
// on. Rule breaks carry the engine's own message, which names the field.
func EngineError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return Errorf("memory engine error: %v", err)
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.AlreadyExists, codes.FailedPrecondition,
		codes.NotFound, codes.PermissionDenied, codes.Aborted: // Aborted: queued for approval
		return Errorf("%s", st.Message())
	case codes.Unavailable:
		return Errorf("memory engine unavailable: %s; retry", st.Message())
	case codes.DeadlineExceeded:
		// The engine connection waits for a restarting engine, so a missing
		// one shows up here rather than as Unavailable.
		return Errorf("memory engine did not answer in time: %s; retry", st.Message())
	case codes.Canceled:
		// A tool call is stopped only before it hands a write to the
		// engine (sdk/wire/cancel.go), so nothing was written.
		return Errorf("%s", wire.CancelledMessage)
	}
	return Errorf("memory engine error (%s): %s", st.Code(), st.Message())
}

// Pending is the answer to a write the namespace policy queued for
// approval (the engine's Aborted status with a PendingAction detail): what
// a tool returns instead of an error, so the agent sees the pending id.
type Pending struct {
	Status    string `json:"status"` // "pending"
	PendingID string `json:"pending_id"`
	Action    string `json:"action"`
	Namespace string `json:"namespace,omitempty"`
	Approver  string `json:"approver,omitempty"`
	Reason    string `json:"reason"`
}

// PendingFromError reports whether err is a queued write, and its answer.
func PendingFromError(err error) (*Pending, bool) {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Aborted {
		return nil, false
	}
	for _, d := range st.Details() {
		if p, ok := d.(*aimemoryv1.PendingAction); ok && p.GetId() != "" {
			return &Pending{Status: "pending", PendingID: p.GetId(), Action: p.GetAction(), Namespace: p.GetNamespace(),
				Approver: p.GetApprover(), Reason: p.GetReason()}, true
		}
	}
	return nil, false
}
