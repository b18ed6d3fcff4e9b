package sdktest

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

func TestStartEngine(t *testing.T) {
	ctx := context.Background()
	eng := StartEngine(t)
	h, err := eng.Health(ctx, &aimemoryv1.HealthRequest{})
	if err != nil || h.Version == "" || h.MemoryCount != 0 {
		t.Fatalf("health = %v, %v", h, err)
	}
	r, err := eng.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "Deploy", Content: "runs on Fridays", Confidence: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := eng.SearchMemories(ctx, &aimemoryv1.SearchMemoriesRequest{Query: "run", Limit: 5})
	if err != nil || len(s.Results) != 1 || s.Results[0].Memory.Id != r.Memory.Id {
		t.Fatalf("search = %v, %v", s, err)
	}
	_, err = eng.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "", Content: "x"}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("invalid store: %v", err)
	}
}

// The engine's gRPC limit sits above the record limits: a 10 MB value sent
// straight to the engine is its field's InvalidArgument, not ResourceExhausted.
func TestEngineAnswersOversizedValuesWithFieldErrors(t *testing.T) {
	eng := StartEngine(t)
	_, err := eng.StoreMemory(context.Background(), &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: strings.Repeat("x", 10<<20)}})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "content: must be at most 65536 bytes") {
		t.Fatalf("10 MB content: %v", err)
	}
}

// Each call gets its own engine and data.
func TestEnginesAreIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := StartEngine(t), StartEngine(t)
	if _, err := a.StoreMemory(ctx, &aimemoryv1.StoreMemoryRequest{Memory: &aimemoryv1.Memory{Title: "t", Content: "x"}}); err != nil {
		t.Fatal(err)
	}
	if h, _ := b.Health(ctx, &aimemoryv1.HealthRequest{}); h.GetMemoryCount() != 0 {
		t.Errorf("second engine sees %d memories", h.GetMemoryCount())
	}
}

// A tool call's assertion works during its call, as the host's would, and
// is refused once Family.Call has ended the call.
func TestCallAssertionEndsWithTheCall(t *testing.T) {
	eng := StartEngine(t)
	t.Setenv(wire.EngineSocketEnv, eng.Socket)
	var kept string
	f := NewFamily(t, "keeper", []sdk.Family{{Name: "keeper", Tools: []sdk.Tool{{
		Name: "keeper_list", Description: "List one memory and keep the call's assertion.",
		Schema: sdk.Schema(`{"type":"object","properties":{"x":{"type":"string","description":"unused"}}}`),
		Handler: func(ctx context.Context, _ sdk.Call) (any, error) {
			kept = wire.CallAssertion(ctx)
			_, err := eng.SDK().Protocol().ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 1})
			return status.Code(err).String(), nil
		}}}}}).WithEngine(eng)
	if got := f.OK("keeper_list", `{}`, nil); got != `"OK"` {
		t.Fatalf("during the call: %s", got)
	}
	plain, err := wire.DialEngineAt(eng.Socket) // as the plugin's own client
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), aimemoryv1.AssertionMetadataKey, kept)
	if _, err := plain.ListMemories(ctx, &aimemoryv1.ListMemoriesRequest{Limit: 1}); status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "has ended") {
		t.Fatalf("after the call: %v, want Unauthenticated: its call has ended", err)
	}
}
