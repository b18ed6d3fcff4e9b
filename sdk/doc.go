// Package sdk is what a family plugin imports, first- or third-party alike:
// Main (or Serve) to run a plugin binary, Tool and Family to declare its
// surface, Call and Args for typed arguments, Engine to reach memory,
// Storage (a key-value view of the family's Keyspace) for its own state,
// ToolError (Errorf) for answers an agent can act on, Logger, and sdktest
// to test it all against the real engine. Its exported API is hand-written
// and covered by the stability promise in docs/plugins.md; the generated
// protocol types stay behind it (sdk/wire, which follows proto/ and carries
// no promise). Importing it changes no process-wide setting.
package sdk
