// Package sdk is what a family plugin imports, first- or third-party alike:
// Serve to run a plugin binary, Tool and Family to declare its surface,
// DialEngine to reach memory, and ToolError for answers an agent can act on.
// Nothing here reaches into host internals.
package sdk
