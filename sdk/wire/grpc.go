package wire

import (
	"runtime"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// GRPCDialOptions are what a host dials its plugins with
// (plugin.ClientConfig.GRPCDialOptions): messages up to
// record.MaxMessageBytes each way, and the fixed flow-control window.
func GRPCDialOptions() []grpc.DialOption {
	return append(FixedWindowDialOptions(), grpc.WithDefaultCallOptions(
		grpc.MaxCallRecvMsgSize(record.MaxMessageBytes),
		grpc.MaxCallSendMsgSize(record.MaxMessageBytes),
	))
}

// GRPCServerOptions are what a plugin serves with: gRPC's own default
// receive limit is 4 MiB, and a 4 MB tool argument used to come back as a
// raw ResourceExhausted instead of its field's error.
func GRPCServerOptions() []grpc.ServerOption {
	return append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(record.MaxMessageBytes),
		grpc.MaxSendMsgSize(record.MaxMessageBytes),
	}, FastServerOptions()...)
}

// flowWindow is the HTTP/2 flow-control window of every hop (host to
// plugin, plugin to engine), per stream and per connection. Fixing it
// turns off gRPC's bandwidth-delay estimator, which otherwise answers
// data with pings and window updates: an extra write and wake-up on both
// sides of a call, on a unix socket where there is no bandwidth to probe.
const flowWindow = 4 << 20

// FixedWindowDialOptions are the client half of flowWindow.
func FixedWindowDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(flowWindow), grpc.WithInitialConnWindowSize(flowWindow)}
}

// FastServerOptions are the per-call settings of every ai-memory gRPC
// server (plugins and the engine): the fixed flow-control window, and a few
// long-lived goroutines that run calls instead of one new goroutine per
// call, whose stack would grow afresh every time (stack growth was about 8%
// of each process's CPU in the per-call profile). Calls beyond the workers
// still get goroutines of their own.
func FastServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(flowWindow),
		grpc.InitialConnWindowSize(flowWindow),
		grpc.NumStreamWorkers(uint32(max(4, runtime.GOMAXPROCS(0)))),
	}
}
