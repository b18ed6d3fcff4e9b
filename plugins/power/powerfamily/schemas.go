package powerfamily

import "github.com/ai-memory/ai-memory/sdk"

// Tool descriptions and input schemas, as short as they can be and still
// exact: every client pays for them on every request (issue 11's target:
// at most 450 cl100k tokens for the family's six tools).

const (
	duplicateDesc     = "Near-duplicate check, before storing."
	autoTagDesc       = "Add tags from key terms, preferring tags in use."
	expandDesc        = "Related terms from the store, to widen a search."
	contradictionDesc = "Do two memories contradict?"
	inboxDesc         = "Your messages from memory_notify."
	consolidateDesc   = "Merge memories into a new one; sources archived."
)

const duplicateSchema = `{"type":"object","properties":{
"title":{"type":"string","description":"Title"},
"content":{"type":"string","description":"Content"},
"namespace":{"type":"string","description":"Exact"},
"threshold":{"type":"number","description":"Default 0.6"}
},"required":["title","content"]}`

const autoTagSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Memory id"}
},"required":["id"]}`

const expandSchema = `{"type":"object","properties":{
"query":{"type":"string","description":"Search query"},
"namespace":{"type":"string","description":"Exact"},
"limit":{"type":"integer","description":"1-50, default 8"}
},"required":["query"]}`

const contradictionSchema = `{"type":"object","properties":{
"id_a":{"type":"string","description":"Memory id"},
"id_b":{"type":"string","description":"Memory id"}
},"required":["id_a","id_b"]}`

const consolidateSchema = `{"type":"object","properties":{
"ids":{"type":"array","items":{"type":"string"},"description":"2-100 ids"},
"title":{"type":"string","description":"New title"},
"summary":{"type":"string","description":"Default: generated"},
"namespace":{"type":"string","description":"Default: the project"}
},"required":["ids","title"]}`

const inboxSchema = `{"type":"object","properties":{
"unread_only":{"type":"boolean","description":"Only unread"},
"limit":{"type":"integer","description":"Default 20"},
"mark_read":{"type":"boolean","description":"Mark read"}
}}`

// schema and argNames are the SDK's: short names for the literals above.
var (
	schema   = sdk.Schema
	argNames = sdk.ArgNames
)
