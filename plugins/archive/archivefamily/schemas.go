package archivefamily

// Archive tool descriptions and input schemas: every client that loads
// the family pays for these on every request, so each word earns its place.

const (
	listDesc    = "Archived memories, newest first; or one id's history."
	restoreDesc = "Restore an archived memory or version, fresh expiry."
	purgeDesc   = "Delete archived memories for good."
	statsDesc   = "Archive counts, dates, size."
)

const listSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Exact"},
"namespace":{"type":"string","description":"Exact"},
"limit":{"type":"integer","description":"Default 50"},
"offset":{"type":"integer","description":"Skip"}
}}`

const restoreSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Exact"},
"version":{"type":"string","description":"Its archived_at"},
"on_conflict":{"type":"string","description":"error (default) or merge"}
},"required":["id"]}`

const purgeSchema = `{"type":"object","properties":{
"older_than_days":{"type":"integer","description":"Or ids"},
"ids":{"type":"array","items":{"type":"string"},"description":"Exact"},
"dry_run":{"type":"boolean","description":"Only report"}
}}`

const statsSchema = `{"type":"object","properties":{}}`
