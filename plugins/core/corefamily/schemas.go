package corefamily

import "github.com/ai-memory/ai-memory/sdk"

// Tool descriptions and input schemas. Every client pays for these on every
// request, so each word must earn its place; the arguments each handler
// accepts are exactly the properties listed here (plus format on store/get).

const (
	storeDesc  = "Store a memory."
	recallDesc = "Memories matching any context word, best first."
	listDesc   = "Memories, highest priority first."
	getDesc    = "A memory in full, with its links."
	searchDesc = "Memories containing every query word."
)

// Enumerations are spelled out in descriptions rather than as "enum": it
// costs fewer tokens, and a wrong value gets an error listing the valid ones.

// Properties several tools share.
const (
	formatProp  = `"format":{"type":"string","description":"toon_compact (default), toon or json"}`
	filterProps = `"namespace":{"type":"string","description":"Exact"},
"tier":{"type":"string","description":"short, mid or long"},
"limit":{"type":"integer","description":"Default 20"},
"agent_id":{"type":"string","description":"Author"},`
	asAgentProp = `"as_agent":{"type":"string","description":"Your namespace, for scopes"}`
)

const storeSchema = `{"type":"object","properties":{
"title":{"type":"string","description":"Unique per namespace"},
"content":{"type":"string","description":"Text"},
"tier":{"type":"string","description":"short, mid (default) or long"},
"namespace":{"type":"string","description":"Default: the project; a/b nests"},
"tags":{"type":"array","items":{"type":"string"},"description":"Labels"},
"priority":{"type":"integer","description":"1-10, default 5"},
"confidence":{"type":"number","description":"0-1, default 1"},
"source":{"type":"string","description":"user, claude (default), hook, api, cli, import, consolidation, system, chaos or notify"},
"metadata":{"type":"object","description":"Any JSON"},
"agent_id":{"type":"string","description":"Author; default you"},
"scope":{"type":"string","description":"private (default), team, unit, org or collective"},
"on_conflict":{"type":"string","description":"Title taken: merge (default), version or error"}
},"required":["title","content"]}`

const recallSchema = `{"type":"object","properties":{
"context":{"type":"string","description":"What to recall"},
"namespace":{"type":"string","description":"Exact, plus ancestors"},
"limit":{"type":"integer","description":"0-50, default 10"},
"tags":{"type":"string","description":"One tag"},
"since":{"type":"string","description":"Min created_at, RFC 3339"},
"until":{"type":"string","description":"Max created_at, RFC 3339"},
` + asAgentProp + `,
"budget_tokens":{"type":"integer","description":"Max content tokens"},
` + formatProp + `
},"required":["context"]}`

const listSchema = `{"type":"object","properties":{
` + filterProps + `
` + formatProp + `
}}`

const getSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Id or unique prefix"}
},"required":["id"]}`

const searchSchema = `{"type":"object","properties":{
"query":{"type":"string","description":"Words"},
` + filterProps + `
` + asAgentProp + `,
` + formatProp + `
},"required":["query"]}`

// schema and argNames are the SDK's: short names for the literals above.
var (
	schema   = sdk.Schema
	argNames = sdk.ArgNames
)
