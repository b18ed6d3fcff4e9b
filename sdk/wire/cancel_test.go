package wire

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// A cancel stops a call only until it hands a write to the engine: a write
// of a cancelled call is refused before it is sent (reads still go), and
// after a write was sent no cancel, the request's own included, ends the
// call's context; its deadline still does.
func TestCancelStopsACallOnlyBeforeItsFirstWrite(t *testing.T) {
	sent := map[string]int{}
	invoke := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		sent[method]++
		return nil
	}
	write, read := aimemoryv1.Memories_StoreMemory_FullMethodName, aimemoryv1.Memories_SearchMemories_FullMethodName

	parent, cancelParent := context.WithCancel(context.Background())
	before := newInFlight(parent, 0)
	defer before.release()
	before.cancel()
	err := handOffWrites(before.ctx, write, nil, nil, nil, invoke)
	if status.Code(err) != codes.Canceled || status.Convert(err).Message() != CancelledMessage || sent[write] != 0 {
		t.Errorf("a write after the cancel: %v, sent %d times", err, sent[write])
	}
	if err := handOffWrites(before.ctx, read, nil, nil, nil, invoke); err != nil || sent[read] != 1 {
		t.Errorf("a read after the cancel: %v, sent %d times", err, sent[read])
	}
	if st, _ := status.FromError(err); st.Code() != codes.Canceled || st.Message() != CancelledMessage {
		t.Errorf("the refusal = %v", err)
	}

	after := newInFlight(parent, time.Hour)
	defer after.release()
	if err := handOffWrites(after.ctx, write, nil, nil, nil, invoke); err != nil || sent[write] != 1 {
		t.Fatalf("a write before any cancel: %v, sent %d times", err, sent[write])
	}
	after.cancel()
	cancelParent() // the gRPC request's own context, as when the host tore the stream down
	if err := after.ctx.Err(); err != nil {
		t.Errorf("a call whose write was sent was stopped: %v", err)
	}
	if err := before.ctx.Err(); err != context.Canceled {
		t.Errorf("the call cancelled before its write: %v", err)
	}
	if d, ok := after.ctx.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Errorf("the call's deadline was lost: %v %v", d, ok)
	}

	unstarted, stop := context.WithCancel(context.Background())
	f := newInFlight(unstarted, 0)
	defer f.release()
	stop()
	recv(t, f.ctx.Done(), "the call to stop") // the request's context ending before any write stops the call
}

// A cancel request on a call stream reaches the call in flight, which
// still answers on the stream.
func TestCallStreamCancelRequest(t *testing.T) {
	blocked := make(chan struct{})
	srv, err := NewFamilyServer("t", "test", []Family{{Name: "t", Tools: []Tool{
		testTool("block", func(ctx context.Context) ([]byte, error) {
			close(blocked)
			<-ctx.Done()
			return nil, errors.New(CancelledMessage) // what sdk.EngineError makes of it
		}),
	}}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline) // a stream that never answers fails
	defer cancel()
	st, err := serveFamily(t, srv).CallStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&aimemoryv1.CallRequest{Tool: "block"}); err != nil {
		t.Fatal(err)
	}
	recv(t, blocked, "the blocking call to start")
	if err := st.Send(&aimemoryv1.CallRequest{Cancel: true}); err != nil {
		t.Fatal(err)
	}
	resp, err := st.Recv()
	if err != nil || !resp.GetIsError() || string(resp.GetText()) != CancelledMessage {
		t.Fatalf("the cancelled call answered %q, %v; want %q", resp.GetText(), err, CancelledMessage)
	}
}
