package sdk

// KeyspacePrefix starts every family's own keyspace (see Keyspace).
const KeyspacePrefix = "_family/"

// Keyspace is the namespace where family keeps its own state: ordinary
// memories, stored, listed, linked and updated through the memory RPCs,
// which the engine lets only calls for that family's tools (the family in
// the host-signed assertion) read or write. Namespaces below it
// (Keyspace(f) + "/x") belong to the family too.
func Keyspace(family string) string { return KeyspacePrefix + family }
