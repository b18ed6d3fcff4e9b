package server

import (
	"context"
	"log/slog"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Recover returns interceptors that turn a panic in a handler into an
// Internal error (logged with its stack) instead of killing the engine,
// which every host and plugin of the data dir shares.
func Recover(log *slog.Logger) []grpc.ServerOption {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	recovered := func(method string, p any) error {
		log.Error("engine handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
		return status.Errorf(codes.Internal, "internal error in %s", method)
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (resp any, err error) {
			defer func() {
				if p := recover(); p != nil {
					resp, err = nil, recovered(info.FullMethod, p)
				}
			}()
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = recovered(info.FullMethod, p)
				}
			}()
			return h(srv, ss)
		}),
	}
}
