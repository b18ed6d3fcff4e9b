package metafamily

// Meta tool descriptions and input schemas: each word costs every request.

const (
	sessionDesc   = "Session context: standards, key and recent memories, unread count."
	statsDesc     = "Store counts, sizes, index health."
	registerDesc  = "Register this session's agent."
	agentListDesc = "Registered agents."
)

const sessionSchema = `{"type":"object","properties":{
"namespace":{"type":"string","description":"Project"},
"limit":{"type":"integer","description":"Default 10"},
"budget_tokens":{"type":"integer","description":"Default 2000"}
}}`

const statsSchema = `{"type":"object","properties":{}}`

const registerSchema = `{"type":"object","properties":{
"agent_id":{"type":"string","description":"Default: yours"},
"agent_type":{"type":"string","description":"e.g. human"},
"capabilities":{"type":"array","items":{"type":"string"},"description":"Tags"}
},"required":["agent_type"]}`

const agentListSchema = `{"type":"object","properties":{}}`
