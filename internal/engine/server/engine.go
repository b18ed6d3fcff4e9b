// Package server serves the engine's gRPC services (Engine, Memories,
// Graph, Audit, Events) over a storage.Backend: it maps storage errors to
// gRPC status codes and never lets a panic escape (see Recover).
package server

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Config is what the services serve: a backend, the broadcaster it
// publishes to (WatchEvents subscribes to it; nil = no events), and what
// Health reports.
type Config struct {
	Backend storage.Backend
	Events  *events.Broadcaster
	Version string
	DataDir string
	Log     *slog.Logger
	// Webhooks vets subscription targets and seals their secrets.
	Webhooks Webhooks
}

// Register registers every engine service on g.
func Register(g grpc.ServiceRegistrar, c Config) {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	e := errorMapper{log: c.Log}
	aimemoryv1.RegisterEngineServer(g, &Engine{cfg: c})
	aimemoryv1.RegisterMemoriesServer(g, &Memories{st: c.Backend, errorMapper: e})
	aimemoryv1.RegisterGraphServer(g, &Graph{st: c.Backend, errorMapper: e})
	aimemoryv1.RegisterAuditServer(g, &Audit{st: c.Backend, errorMapper: e})
	aimemoryv1.RegisterEventsServer(g, &Events{events: c.Events, log: c.Log, st: c.Backend})
	aimemoryv1.RegisterSubscriptionsServer(g, &Subscriptions{st: c.Backend, hooks: c.Webhooks, errorMapper: e})
	aimemoryv1.RegisterMessagesServer(g, &Messages{st: c.Backend, errorMapper: e})
}

// Engine serves Health.
type Engine struct {
	aimemoryv1.UnimplementedEngineServer
	cfg Config
}

// Health reports the engine's identity and size; hosts poll it after
// starting an engine.
func (s *Engine) Health(ctx context.Context, _ *aimemoryv1.HealthRequest) (*aimemoryv1.HealthResponse, error) {
	return &aimemoryv1.HealthResponse{
		Version:       s.cfg.Version,
		SchemaVersion: s.cfg.Backend.SchemaVersion(),
		DataDir:       s.cfg.DataDir,
		Pid:           int64(os.Getpid()),
		MemoryCount:   uint64(s.cfg.Backend.Count()),
	}, nil
}

// errorMapper maps a storage error to a gRPC status: rule violations name
// the field, and anything unexpected is Internal (and logged).
type errorMapper struct{ log *slog.Logger }

func (m errorMapper) status(err error) error {
	if err == nil {
		return nil
	}
	var fe *record.FieldError
	switch {
	case errors.As(err, &fe):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, storage.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, storage.ErrConflict):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, storage.ErrAmbiguous):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, storage.ErrDenied):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, storage.ErrPending):
		// Queued for approval (the governance issue adds the request id).
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	m.log.Error("engine request failed", "err", err)
	return status.Error(codes.Internal, err.Error())
}
