package wire

import (
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Engine is every service of the engine API, as one client: what a family
// plugin holds to reach memory. *EngineConn implements it.
type Engine interface {
	aimemoryv1.EngineClient        // health
	aimemoryv1.MemoriesClient      // records, keyword search
	aimemoryv1.CorpusClient        // keyword statistics
	aimemoryv1.VectorsClient       // embeddings and their endpoint
	aimemoryv1.ModelsClient        // the chat endpoint
	aimemoryv1.GraphClient         // links, entities, namespace tree
	aimemoryv1.AuditClient         // the hash-chained audit log
	aimemoryv1.EventsClient        // committed writes, as a stream
	aimemoryv1.GovernanceClient    // standards, pending approvals, agent registry
	aimemoryv1.ArchiveClient       // forget, promote, restore, archived rows, purge
	aimemoryv1.SubscriptionsClient // webhook subscriptions
	aimemoryv1.MessagesClient      // inboxes
}

// EngineConn is a connection to the data dir's engine, with a client of
// each of its services on the one connection.
type EngineConn struct {
	aimemoryv1.EngineClient
	aimemoryv1.MemoriesClient
	aimemoryv1.CorpusClient
	aimemoryv1.VectorsClient
	aimemoryv1.ModelsClient
	aimemoryv1.GraphClient
	aimemoryv1.AuditClient
	aimemoryv1.EventsClient
	aimemoryv1.GovernanceClient
	aimemoryv1.ArchiveClient
	aimemoryv1.TransferClient
	aimemoryv1.SubscriptionsClient
	aimemoryv1.MessagesClient
	aimemoryv1.CallsClient
	conn *grpc.ClientConn
}

var _ Engine = (*EngineConn)(nil)

// NewEngineConn wraps an open connection to an engine; Close closes it.
func NewEngineConn(conn *grpc.ClientConn) *EngineConn {
	return &EngineConn{
		EngineClient:        aimemoryv1.NewEngineClient(conn),
		MemoriesClient:      aimemoryv1.NewMemoriesClient(conn),
		CorpusClient:        aimemoryv1.NewCorpusClient(conn),
		VectorsClient:       aimemoryv1.NewVectorsClient(conn),
		ModelsClient:        aimemoryv1.NewModelsClient(conn),
		GraphClient:         aimemoryv1.NewGraphClient(conn),
		AuditClient:         aimemoryv1.NewAuditClient(conn),
		EventsClient:        aimemoryv1.NewEventsClient(conn),
		GovernanceClient:    aimemoryv1.NewGovernanceClient(conn),
		ArchiveClient:       aimemoryv1.NewArchiveClient(conn),
		TransferClient:      aimemoryv1.NewTransferClient(conn),
		SubscriptionsClient: aimemoryv1.NewSubscriptionsClient(conn),
		MessagesClient:      aimemoryv1.NewMessagesClient(conn),
		CallsClient:         aimemoryv1.NewCallsClient(conn),
		conn:                conn,
	}
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

// DialEngineAt connects to an engine listening on a unix socket path. Calls
// forward the caller assertion of the tool call their context came from;
// opts may add more (a host adds its own credentials).
func DialEngineAt(socketPath string, opts ...grpc.DialOption) (*EngineConn, error) {
	opts = append(append(FixedWindowDialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(forwardAssertion{}),
		grpc.WithChainUnaryInterceptor(handOffWrites), // cancel.go
		// The engine may be restarting (its host respawns it): wait for it
		// within the caller's deadline instead of failing at once, and
		// retry the socket quickly so a respawn is noticed in milliseconds.
		// A list of 200 memories of 64 KiB content and metadata exceeds gRPC's 4 MiB default.
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true), grpc.MaxCallRecvMsgSize(record.MaxMessageBytes), grpc.MaxCallSendMsgSize(record.MaxMessageBytes)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 500 * time.Millisecond},
			MinConnectTimeout: time.Second,
		})), opts...)
	conn, err := grpc.NewClient("unix://"+socketPath, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial engine at %s: %w", socketPath, err)
	}
	return NewEngineConn(conn), nil
}
