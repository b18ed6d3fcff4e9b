package metafamily

// Meta tool descriptions and input schemas: each word costs every request.

const (
	sessionDesc   = "Start a session: namespace standards, important and recent memories, unread count, within budget_tokens."
	statsDesc     = "Store counts by tier and namespace, expiring soon, links, sizes, index health."
	registerDesc  = "Register this session's agent identity (others: operators only)."
	agentListDesc = "List registered agents with last-seen times."
)

const registerSchema = `{"type":"object","properties":{
"agent_id":{"type":"string","description":"Default: this session's"},
"agent_type":{"type":"string","description":"e.g. ai:claude-code, human"},
"capabilities":{"type":"array","items":{"type":"string"}}
},"required":["agent_type"]}`

const agentListSchema = `{"type":"object","properties":{}}`

const sessionSchema = `{"type":"object","properties":{
"namespace":{"type":"string","description":"Project namespace (and its ancestors)"},
"limit":{"type":"integer","description":"1-50, default 10"},
"budget_tokens":{"type":"integer","description":"cl100k tokens for the whole result, default 2000"}
}}`

const statsSchema = `{"type":"object","properties":{}}`
