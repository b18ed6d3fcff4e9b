package corefamily

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/sdktest"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestEngineError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{status.Error(codes.InvalidArgument, "title: must not be empty"), "title: must not be empty"},
		{status.Error(codes.AlreadyExists, "CONFLICT: memory with title 'x'"), "CONFLICT: memory with title 'x'"},
		{status.Error(codes.FailedPrecondition, "ambiguous ID prefix 'a': 2 matches"), "ambiguous ID prefix 'a': 2 matches"},
		{status.Error(codes.PermissionDenied, "store denied by governance: owner only"), "store denied by governance: owner only"},
		{status.Error(codes.Unavailable, "connection refused"), "memory engine unavailable: connection refused; retry"},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), "memory engine did not answer in time: context deadline exceeded; retry"},
		{status.Error(codes.Internal, "disk full"), "memory engine error (Internal): disk full"},
		{errors.New("boom"), "memory engine error: boom"},
	}
	for _, tc := range tests {
		got := sdk.EngineError(tc.err)
		if got.Error() != tc.want || !sdk.IsToolError(got) {
			t.Errorf("sdk.EngineError(%v) = %q, want tool error %q", tc.err, got, tc.want)
		}
	}
}

// TestEngineDown: with no engine behind the socket a call answers with an
// error the agent can act on, not a hang or a crash.
func TestEngineDown(t *testing.T) {
	eng, err := wire.DialEngineAt(filepath.Join(t.TempDir(), "missing.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := sdktest.Server("core", "test", Families(eng))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	resp, err := srv.Call(ctx, &aimemoryv1.CallRequest{Tool: "memory_list", ArgumentsJson: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetIsError() || !strings.HasPrefix(string(resp.GetText()), "memory engine ") || !strings.HasSuffix(string(resp.GetText()), "; retry") {
		t.Errorf("engine down: %+v", resp)
	}
}
