package ops

import (
	"context"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/index"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Event is the event of type typ that a write of m records, at the
// write's time at, by ctx's caller: the same on every backend.
func Event(ctx context.Context, typ string, m *aimemoryv1.Memory, at int64) *aimemoryv1.Event {
	agent, _ := index.MetadataAgentScope(m.GetMetadataJson())
	c, _ := caller.FromContext(ctx)
	return &aimemoryv1.Event{
		Type:      typ,
		MemoryId:  m.GetId(),
		Namespace: m.GetNamespace(),
		AgentId:   agent,
		At:        at,
		Principal: c.Principal,
		Title:     m.GetTitle(),
	}
}
