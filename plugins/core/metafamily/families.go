// Package metafamily is the meta tool family the core plugin serves beside
// core: memory_session_start, memory_stats, memory_agent_register and
// memory_agent_list (spec/family-core.md, meta sections, with issue 10's
// fixes); memory_capabilities is the host's. It holds no data: every read
// goes through the Engine API with the caller's identity.
package metafamily

import (
	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/wire"
)

// service is what the handlers share.
type service struct {
	eng       wire.Engine
	standards StandardsSource
	inbox     InboxSource
}

// Sources are where session_start reads what other families keep; a nil
// one returns nothing (see sources.go).
type Sources struct {
	Standards StandardsSource
	Inbox     InboxSource
}

// Families returns the meta family.
func Families(eng wire.Engine, src Sources) []sdk.Family {
	s := &service{eng: eng, standards: src.Standards, inbox: src.Inbox}
	if s.standards == nil {
		s.standards = noStandards{}
	}
	if s.inbox == nil {
		s.inbox = noInbox{}
	}
	return []sdk.Family{{Name: "meta", Tools: []sdk.Tool{
		{Name: "memory_session_start", Description: sessionDesc, Schema: sdk.Schema(sessionSchema), Hints: sdk.ReadOnly, Handler: s.sessionStart},
		{Name: "memory_stats", Description: statsDesc, Schema: sdk.Schema(statsSchema), Hints: sdk.ReadOnly, Handler: s.stats},
		{Name: "memory_agent_register", Description: registerDesc, Schema: sdk.Schema(registerSchema), Hints: sdk.Hints{Destructive: sdk.Bool(false)}, Handler: s.agentRegister},
		{Name: "memory_agent_list", Description: agentListDesc, Schema: sdk.Schema(agentListSchema), Hints: sdk.ReadOnly, Handler: s.agentList},
	}}}
}
