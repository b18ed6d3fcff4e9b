package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The call stream answers each request as Call would, in order, with the
// request's deadline on the handler's context; cancelling the stream
// cancels the call running on it.
func TestCallStream(t *testing.T) {
	blocked := make(chan struct{})
	ended := make(chan error, 1)
	srv, err := NewFamilyServer("t", "test", []Family{{Name: "t", Tools: []Tool{
		testTool("deadline", func(ctx context.Context) ([]byte, error) {
			d, ok := ctx.Deadline()
			return fmt.Append(nil, ok && time.Until(d) > 50*time.Second && time.Until(d) <= time.Minute), nil
		}),
		testTool("block", func(ctx context.Context) ([]byte, error) {
			close(blocked)
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		}),
	}}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := srv.Describe(context.Background(), &aimemoryv1.DescribeRequest{}); !d.GetCallStream() {
		t.Fatal("Describe does not offer CallStream")
	}
	fc := serveFamily(t, srv)

	ctx, cancel := context.WithCancel(context.Background())
	// A stream that never answers is cancelled, failing the test; a
	// deadline instead would reach the calls, which test there being none.
	defer time.AfterFunc(testDeadline, cancel).Stop()
	st, err := fc.CallStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		req  *aimemoryv1.CallRequest
		text string
	}{
		{&aimemoryv1.CallRequest{Tool: "deadline", TimeoutMicros: time.Minute.Microseconds()}, "true"},
		{&aimemoryv1.CallRequest{Tool: "deadline"}, "false"}, // no deadline sent, none set
		{&aimemoryv1.CallRequest{Tool: "nope"}, `tool "nope" is not served by plugin t`},
	} {
		if err := st.Send(want.req); err != nil {
			t.Fatal(err)
		}
		resp, err := st.Recv()
		if err != nil || string(resp.GetText()) != want.text {
			t.Fatalf("answer %d = %q, %v; want %q", i, resp.GetText(), err, want.text)
		}
	}
	if err := st.Send(&aimemoryv1.CallRequest{Tool: "block"}); err != nil {
		t.Fatal(err)
	}
	recv(t, blocked, "the blocking call to start")
	cancel()
	if err := recv(t, ended, "the cancelled call to end"); err != context.Canceled {
		t.Fatalf("the call on a cancelled stream ended with %v, want context.Canceled", err)
	}
	if _, err := st.Recv(); err == nil {
		t.Fatal("a cancelled stream answered")
	}
}

// testDeadline bounds a test's wait for an event: a regression fails the
// test instead of hanging it.
const testDeadline = time.Minute

// recv returns the next value from ch, failing t if none comes within
// testDeadline (sdk cannot use the main module's internal/testwait).
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testDeadline):
		t.Fatalf("timed out after %v waiting for %s", testDeadline, what)
		var zero T
		return zero
	}
}

// testTool is a tool of an object schema answering with run.
func testTool(name string, run func(ctx context.Context) ([]byte, error)) Tool {
	return Tool{Definition: &aimemoryv1.ToolDefinition{Name: name, InputSchemaJson: []byte(`{"type":"object"}`)},
		Run: func(ctx context.Context, _ json.RawMessage, _ *aimemoryv1.CallContext) ([]byte, error) {
			return run(ctx)
		}}
}

// serveFamily serves srv over a unix socket for the test's length and
// returns a client of it.
func serveFamily(t *testing.T, srv aimemoryv1.FamilyServer) aimemoryv1.FamilyClient {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(GRPCServerOptions()...)
	aimemoryv1.RegisterFamilyServer(gs, srv)
	go gs.Serve(l)
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return aimemoryv1.NewFamilyClient(cc)
}
