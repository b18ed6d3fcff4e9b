package wire

import (
	"context"

	"google.golang.org/grpc"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// memoryReader is the one engine read ResolveIDs needs.
type memoryReader interface {
	GetMemories(ctx context.Context, in *aimemoryv1.GetMemoriesRequest, opts ...grpc.CallOption) (*aimemoryv1.GetMemoriesResponse, error)
}

// ResolveIDs turns memory ids or unique id prefixes (the short ids results
// show) into full ids, in one engine read. An id matching no live memory
// is returned as it is, so the caller's own not-found answer applies; a
// prefix matching several is the engine's error listing the candidates
// (sdk.EngineError makes it an answer).
func ResolveIDs(ctx context.Context, eng memoryReader, ids ...string) ([]string, error) {
	resp, err := eng.GetMemories(ctx, &aimemoryv1.GetMemoriesRequest{Ids: ids, AllowPrefix: true})
	if err != nil {
		return nil, err
	}
	missing := make(map[string]bool, len(resp.GetNotFound()))
	for _, id := range resp.GetNotFound() {
		missing[id] = true
	}
	out := make([]string, len(ids))
	found := resp.GetMemories() // in request order, one per id found
	for i, id := range ids {
		if missing[id] || len(found) == 0 {
			out[i] = id
			continue
		}
		out[i], found = found[0].GetId(), found[1:]
	}
	return out, nil
}
