package sdk

import (
	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// GRPCDialOptions are what a host dials its plugins with
// (plugin.ClientConfig.GRPCDialOptions): messages up to
// record.MaxMessageBytes each way.
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(record.MaxMessageBytes),
		grpc.MaxCallSendMsgSize(record.MaxMessageBytes),
	)}
}

// GRPCServerOptions are what a plugin serves with: gRPC's own default
// receive limit is 4 MiB, and a 4 MB tool argument used to come back as a
// raw ResourceExhausted instead of its field's error.
func GRPCServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(record.MaxMessageBytes),
		grpc.MaxSendMsgSize(record.MaxMessageBytes),
	}
}
