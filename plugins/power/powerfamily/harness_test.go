package powerfamily

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ai-memory/ai-memory/sdk/sdktest"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// harness calls the power tools the way the host does (sdktest.Family),
// over a real engine on a temporary data dir.
type harness struct {
	*sdktest.Family
	t   *testing.T
	eng *sdktest.Engine
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	eng := sdktest.StartEngine(t)
	return &harness{Family: sdktest.NewFamily(t, "power", Families(eng)).WithEngine(eng), t: t, eng: eng}
}

// memory stores a memory directly in the engine and returns its id.
func (h *harness) memory(title, content string, tags ...string) string {
	h.t.Helper()
	resp, err := h.eng.StoreMemory(context.Background(), &aimemoryv1.StoreMemoryRequest{
		Memory: &aimemoryv1.Memory{Title: title, Content: content, Tags: tags, Confidence: 1},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetMemory().GetId()
}

func jsonArgs(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}
