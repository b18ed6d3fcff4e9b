// Package wire is the plugin protocol in Go: the go-plugin handshake, the
// Family server a plugin runs, the Engine client it calls memory with, and
// the gRPC options of both hops. Hosts, the sdk package and the first-party
// plugins share it. It follows proto/ and changes with it, as does
// aimemoryv1, the Go make proto generates from proto/: it is outside
// the SDK's stability promise (docs/plugins.md), which covers package sdk.
package wire
