package sdk

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
		return Errorf("memory engine call canceled: %s", st.Message())
	}
	return Errorf("memory engine error (%s): %s", st.Code(), st.Message())
}
