package wire

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// ProtocolVersion is the plugin protocol's major version, bumped when the
// Family service or the Engine API changes incompatibly. A host refuses a
// plugin of another major (go-plugin's handshake carries it).
const ProtocolVersion = 1

// ProtocolMinor is bumped when the protocol gains what an older host or
// plugin may ignore (a field, an RPC). A plugin of a newer minor works with
// an older host of its major, and the other way round. History:
//
//	1.0  Family Describe/Call, the Engine API
//	1.1  DescribeResponse.protocol_minor; family keyspaces (Keyspace)
//	1.2  WatchEventsRequest.liveness_only
//	1.3  Family.CallStream (DescribeResponse.call_stream, CallRequest.timeout_micros)
//	1.4  CallRequest.cancel on a call stream (sdk/wire/cancel.go)
//	1.5  Calls.Track (hosts only): a tool call's assertion is accepted only
//	     while the call runs, from the plugin process it was sent to
const ProtocolMinor = 5

// PluginKey names the one plugin every family binary dispenses.
const PluginKey = "family"

// EngineSocketEnv carries the engine's unix socket path from host to plugin.
const EngineSocketEnv = "AI_MEMORY_ENGINE_SOCKET"

// Handshake is shared by host and plugins. The cookie only stops a plugin
// binary from being run by hand by mistake; it is not a security boundary.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "AI_MEMORY_PLUGIN",
	MagicCookieValue: "family-v1-6f1c2a",
}

// GRPCFamily adapts a FamilyServer to go-plugin. The host uses it with a nil
// Impl to obtain a FamilyClient.
type GRPCFamily struct {
	plugin.NetRPCUnsupportedPlugin
	Impl aimemoryv1.FamilyServer
}

// GRPCServer registers the family service on the plugin's gRPC server.
func (p *GRPCFamily) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	aimemoryv1.RegisterFamilyServer(s, p.Impl)
	return nil
}

// GRPCClient returns an aimemoryv1.FamilyClient for the host.
func (p *GRPCFamily) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return aimemoryv1.NewFamilyClient(c), nil
}

// PluginSet is the go-plugin plugin map shared by host and plugins.
func PluginSet(impl aimemoryv1.FamilyServer) plugin.PluginSet {
	return plugin.PluginSet{PluginKey: &GRPCFamily{Impl: impl}}
}
