package sdk

import (
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// EngineConn is a connection to the data dir's engine.
type EngineConn struct {
	aimemoryv1.EngineClient
	conn *grpc.ClientConn
}

// Close closes the connection.
func (c *EngineConn) Close() error { return c.conn.Close() }

// DialEngine connects to the engine socket the host handed this plugin
// (AI_MEMORY_ENGINE_SOCKET). The connection is lazy: a missing engine shows
// up as an Unavailable error on the first call, not here.
func DialEngine() (*EngineConn, error) {
	path := os.Getenv(EngineSocketEnv)
	if path == "" {
		return nil, errors.New(EngineSocketEnv + " is not set; plugins are started by the ai-memory host")
	}
	return DialEngineAt(path)
}

// DialEngineAt connects to an engine listening on a unix socket path.
func DialEngineAt(socketPath string) (*EngineConn, error) {
	conn, err := grpc.NewClient("unix://"+socketPath,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// The engine may be restarting (its host respawns it): wait for it
		// within the caller's deadline instead of failing at once, and
		// retry the socket quickly so a respawn is noticed in milliseconds.
		// A list of 200 memories of 64 KiB content and metadata exceeds gRPC's 4 MiB default.
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true), grpc.MaxCallRecvMsgSize(record.MaxMessageBytes), grpc.MaxCallSendMsgSize(record.MaxMessageBytes)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		return nil, fmt.Errorf("dial engine at %s: %w", socketPath, err)
	}
	return &EngineConn{EngineClient: aimemoryv1.NewEngineClient(conn), conn: conn}, nil
}
