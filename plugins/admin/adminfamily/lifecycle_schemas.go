package adminfamily

// Lifecycle tool descriptions and input schemas: every client pays for
// these on every request, so each word earns its place. Each handler
// accepts exactly these properties (plus agent_id on delete and promote,
// taken for compatibility and never used as authority).

const (
	updateDesc  = "Edit a memory (old version archived)."
	deleteDesc  = "Delete a memory and its links."
	forgetDesc  = "Archive memories matching all filters."
	gcDesc      = "Archive expired memories now."
	promoteDesc = "Make a memory long-term, or copy it to to_namespace."
)

const idProp = `"id":{"type":"string","description":"Id or prefix"}`

const dryRunProp = `"dry_run":{"type":"boolean","description":"Only report"}`

const updateSchema = `{"type":"object","properties":{
` + idProp + `,
"title":{"type":"string","description":"New title"},
"content":{"type":"string","description":"New text"},
"tier":{"type":"string","description":"short, mid or long"},
"namespace":{"type":"string","description":"Moves it"},
"tags":{"type":"array","items":{"type":"string"},"description":"Replace all"},
"priority":{"type":"integer","description":"1-10"},
"confidence":{"type":"number","description":"0-1"},
"expires_at":{"type":"string","description":"Empty clears"},
"metadata":{"type":"object","description":"Replaces; keeps agent_id"}
},"required":["id"]}`

const deleteSchema = `{"type":"object","properties":{
` + idProp + `,
"archive":{"type":"boolean","description":"Keep it restorable"}
},"required":["id"]}`

const forgetSchema = `{"type":"object","properties":{
"namespace":{"type":"string","description":"Exact"},
"pattern":{"type":"string","description":"Words; all must match"},
"tier":{"type":"string","description":"short, mid or long"},
` + dryRunProp + `
}}`

const gcSchema = `{"type":"object","properties":{
` + dryRunProp + `
}}`

const promoteSchema = `{"type":"object","properties":{
` + idProp + `,
"to_namespace":{"type":"string","description":"An ancestor"}
},"required":["id"]}`
