package graphfamily

import "github.com/ai-memory/ai-memory/sdk"

// Tool descriptions and input schemas. Every client pays for these on every
// request (family-graph.md: the reference's eight cost 1,694 cl100k
// tokens), so each word must earn its place; a handler accepts exactly the
// properties listed here. Enumerations are spelled out in descriptions, not
// as "enum": it costs fewer tokens, and a wrong value gets an error listing
// the valid ones.

const (
	linkDesc       = "Link two memories (directed)."
	getLinksDesc   = "Links from and to a memory."
	queryDesc      = "Memories reachable from source_id, nearest first."
	timelineDesc   = "Links from source_id, oldest first."
	invalidateDesc = "End a link's validity, keeping it as history."
	registerDesc   = "Create an entity with aliases, or get the existing one."
	byAliasDesc    = "Entity by name or alias, case-insensitive."
	taxonomyDesc   = "Namespace tree with live memory counts."
)

// endsProps are a link's two ends, as link and invalidate take them.
const endsProps = `"source_id":{"type":"string","description":"From memory id"},
"target_id":{"type":"string","description":"To memory id"},`

const linkSchema = `{"type":"object","properties":{
` + endsProps + `
"relation":{"type":"string","description":"related_to (default), supersedes, contradicts or derived_from"}
},"required":["source_id","target_id"]}`

const getLinksSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Memory id"}
},"required":["id"]}`

const querySchema = `{"type":"object","properties":{
"source_id":{"type":"string","description":"Memory id"},
"max_depth":{"type":"integer","description":"Hops, 1-5, default 1"},
"direction":{"type":"string","description":"out (default), in or both"},
"relation":{"type":"string","description":"Only this one: related_to, supersedes, contradicts or derived_from"},
"valid_at":{"type":"string","description":"RFC 3339; only links valid then"},
"allowed_agents":{"type":"array","items":{"type":"string"},"description":"Only links these agents observed"},
"limit":{"type":"integer","description":"Default 200"}
},"required":["source_id"]}`

const timelineSchema = `{"type":"object","properties":{
"source_id":{"type":"string","description":"Memory id"},
"since":{"type":"string","description":"Min valid_from, RFC 3339"},
"until":{"type":"string","description":"Max valid_from, RFC 3339"},
"limit":{"type":"integer","description":"Default 200"}
},"required":["source_id"]}`

const invalidateSchema = `{"type":"object","properties":{
` + endsProps + `
"relation":{"type":"string","description":"related_to, supersedes, contradicts or derived_from"},
"valid_until":{"type":"string","description":"RFC 3339, default now"}
},"required":["source_id","target_id","relation"]}`

const registerSchema = `{"type":"object","properties":{
"canonical_name":{"type":"string","description":"Name"},
"namespace":{"type":"string","description":"Namespace"},
"aliases":{"type":"array","items":{"type":"string"},"description":"Other names"},
"metadata":{"type":"object","description":"Any JSON; new entity only"},
"agent_id":{"type":"string","description":"Author; default you"}
},"required":["canonical_name","namespace"]}`

const byAliasSchema = `{"type":"object","properties":{
"alias":{"type":"string","description":"Name or alias"},
"namespace":{"type":"string","description":"Exact; default any, newest wins"}
},"required":["alias"]}`

const taxonomySchema = `{"type":"object","properties":{
"namespace_prefix":{"type":"string","description":"Subtree root"},
"depth":{"type":"integer","description":"0-8, default 8"},
"limit":{"type":"integer","description":"Max namespaces, default 1000"}
}}`

// schema and argNames are the SDK's: short names for the literals above.
var (
	schema   = sdk.Schema
	argNames = sdk.ArgNames
)
