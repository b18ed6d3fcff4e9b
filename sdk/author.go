package sdk

import "github.com/ai-memory/ai-memory/sdk/record"

// StampAuthor sets meta["agent_id"] to who wrote a record: the agent_id
// argument, else metadata.agent_id, else the session identity. It is
// provenance only and never changes what the session may do. The value is
// validated and the error names the field it came from.
func StampAuthor(a *Args, meta map[string]any, call Call) error {
	agent, field := call.Caller(), "session agent id"
	if v, ok := meta["agent_id"]; ok {
		id, isStr := v.(string)
		if !isStr {
			return Errorf("metadata.agent_id: must be a string")
		}
		agent, field = id, "metadata.agent_id"
	}
	if _, ok := a.Value("agent_id"); ok {
		var err error
		if agent, err = a.Str("agent_id", ""); err != nil {
			return err
		}
		field = "agent_id"
	}
	if err := record.ValidateAgentID(field, agent); err != nil {
		return err
	}
	meta["agent_id"] = agent
	return nil
}
