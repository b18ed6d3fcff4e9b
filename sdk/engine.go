package sdk

import (
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
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
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial engine at %s: %w", socketPath, err)
	}
	return &EngineConn{EngineClient: aimemoryv1.NewEngineClient(conn), conn: conn}, nil
}
