package sdk

import (
	"runtime"

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
		StreamWorkers(),
	}
}

// StreamWorkers makes a gRPC server run calls on a few long-lived
// goroutines instead of one new goroutine per call, whose stack would grow
// afresh every time (stack growth was about 8% of each process's CPU in
// the per-call profile). Calls beyond the workers still get goroutines.
func StreamWorkers() grpc.ServerOption {
	return grpc.NumStreamWorkers(uint32(max(4, runtime.GOMAXPROCS(0))))
}
