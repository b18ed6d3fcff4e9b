package metafamily

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-memory/ai-memory/sdk"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/render"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// format is accepted but not advertised, as on memory_store: agents read
// the default; programs ask for json, which is complete.
var (
	registerArgs   = sdk.ArgNames(registerSchema, "format")
	agentsListArgs = sdk.ArgNames(agentListSchema, "format")
)

// agentView is one registry entry as results show it.
type agentView struct {
	AgentID      string   `json:"agent_id"`
	AgentType    string   `json:"agent_type"`
	Capabilities []string `json:"capabilities,omitempty"`
	RegisteredAt string   `json:"registered_at"`
	LastSeenAt   string   `json:"last_seen_at,omitempty"`
	RegisteredBy string   `json:"registered_by,omitempty"` // an operator who registered another identity
}

// registerResult is memory_agent_register's answer in JSON.
type registerResult struct {
	Registered   bool     `json:"registered"`
	ID           string   `json:"id"` // the registry memory; the same on re-registration
	AgentID      string   `json:"agent_id"`
	AgentType    string   `json:"agent_type"`
	Capabilities []string `json:"capabilities,omitempty"`
	Created      bool     `json:"created,omitempty"`
}

// registerAnswer is its default answer: what the caller did not send.
type registerAnswer struct {
	Registered bool   `json:"registered"`
	AgentID    string `json:"agent_id"`
	Created    bool   `json:"created,omitempty"`
}

func registerRequest(call sdk.Call) (_ *aimemoryv1.RegisterAgentRequest, format string, err error) {
	a, err := sdk.ParseArgs(call.Arguments, registerArgs)
	if err != nil {
		return nil, "", err
	}
	req := &aimemoryv1.RegisterAgentRequest{}
	if req.AgentId, err = a.Str("agent_id", ""); err != nil {
		return nil, "", err
	}
	if _, given := a.Value("agent_id"); given {
		if err := record.ValidateAgentID("agent_id", req.AgentId); err != nil {
			return nil, "", err
		}
	}
	if req.AgentType, err = a.Required("agent_type"); err != nil {
		return nil, "", err
	}
	if err := record.ValidateAgentType(req.AgentType); err != nil {
		return nil, "", err
	}
	if _, given := a.Value("capabilities"); given {
		if req.Capabilities, err = a.StringList("capabilities"); err != nil {
			return nil, "", err
		}
		if err := record.ValidateTags("capabilities", req.Capabilities); err != nil {
			return nil, "", err
		}
	}
	format, err = render.FormatArg(a)
	return req, format, err
}

// agentRegister registers the session identity (agent_id absent or equal
// to it). Another agent_id is sent on, and the engine refuses it unless
// the session is a [governance] operator: the decision is the engine's,
// on the identity the host resolved.
func (s *service) agentRegister(ctx context.Context, call sdk.Call) (any, error) {
	req, format, err := registerRequest(call)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.RegisterAgent(ctx, req)
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	m := resp.GetAgent()
	who := req.AgentId
	if who == "" {
		who = call.AgentID
	}
	if format != render.JSON {
		return registerAnswer{Registered: true, AgentID: who, Created: resp.GetCreated()}, nil
	}
	return registerResult{Registered: true, ID: m.GetId(), AgentID: who, AgentType: req.AgentType,
		Capabilities: req.Capabilities, Created: resp.GetCreated()}, nil
}

type agentListResult struct {
	Count  int         `json:"count"`
	Agents []agentView `json:"agents"`
}

// agentList answers the registry: by default one TOON row an agent, no
// timestamps (json has them).
func (s *service) agentList(ctx context.Context, call sdk.Call) (any, error) {
	a, err := sdk.ParseArgs(call.Arguments, agentsListArgs)
	if err != nil {
		return nil, err
	}
	format, err := render.FormatArg(a)
	if err != nil {
		return nil, err
	}
	resp, err := s.eng.ListAgents(ctx, &aimemoryv1.ListAgentsRequest{})
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := agentListResult{Agents: make([]agentView, 0, len(resp.GetAgents()))}
	for _, a := range resp.GetAgents() {
		out.Agents = append(out.Agents, agentView{
			AgentID: a.GetAgentId(), AgentType: a.GetAgentType(), Capabilities: a.GetCapabilities(),
			RegisteredAt: record.FormatTime(a.GetRegisteredAt()), LastSeenAt: record.FormatTime(a.GetLastSeenAt()),
			RegisteredBy: registeredBy(a),
		})
	}
	out.Count = len(out.Agents)
	if format == render.JSON {
		return out, nil
	}
	return sdk.Text(agentsTOON(out)), nil
}

// agentsTOON is the registry as TOON rows; registered_by only when some
// agent was registered by another.
func agentsTOON(r agentListResult) string {
	by := slices.ContainsFunc(r.Agents, func(a agentView) bool { return a.RegisteredBy != "" })
	var b strings.Builder
	b.WriteString("count:" + strconv.Itoa(r.Count) + "\nagents[agent_id|agent_type|capabilities")
	if by {
		b.WriteString("|registered_by")
	}
	b.WriteString("]:")
	for _, a := range r.Agents {
		b.WriteString("\n" + render.EscapeTOON(a.AgentID) + "|" + render.EscapeTOON(a.AgentType) + "|" + render.TagsCell(a.Capabilities))
		if by {
			b.WriteString("|" + render.EscapeTOON(a.RegisteredBy))
		}
	}
	return b.String()
}

// registeredBy is shown only when someone else registered the agent.
func registeredBy(a *aimemoryv1.Agent) string {
	if by := a.GetRegisteredBy(); by != a.GetAgentId() {
		return by
	}
	return ""
}
