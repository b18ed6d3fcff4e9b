package archivefamily

// Archive tool descriptions and input schemas: every client that loads
// the family pays for these on every request, so each word earns its place.

const (
	listDesc    = "List archived memories, newest first; with id, its archived row and superseded versions."
	restoreDesc = "Bring an archived memory (or a version) back with a fresh expiry."
	purgeDesc   = "Delete archived memories for good: older_than_days or ids."
	statsDesc   = "Archive counts by reason and namespace, oldest, newest, size."
)

const listSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Exact id: its history"},
"namespace":{"type":"string","description":"Exact"},
"reason":{"type":"string","description":"ttl_expired, forget, delete or superseded"},
"limit":{"type":"integer","description":"1-1000, default 50"},
"offset":{"type":"integer"}
}}`

const restoreSchema = `{"type":"object","properties":{
"id":{"type":"string","description":"Exact id"},
"version":{"type":"string","description":"archived_at of a superseded version"},
"on_conflict":{"type":"string","description":"Title taken: error (default) or merge"}
},"required":["id"]}`

const purgeSchema = `{"type":"object","properties":{
"older_than_days":{"type":"integer","description":"0 or more"},
"ids":{"type":"array","items":{"type":"string"}},
"dry_run":{"type":"boolean","description":"Only report"}
}}`

const statsSchema = `{"type":"object","properties":{}}`
