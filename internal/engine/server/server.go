// Package server serves the Engine gRPC API over a store: it maps store
// errors to gRPC status codes and never lets a panic escape (see Recover).
package server

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/store"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
	"github.com/ai-memory/ai-memory/sdk/record"
)

// Server implements aimemoryv1.EngineServer.
type Server struct {
	aimemoryv1.UnimplementedEngineServer
	store   *store.Store
	events  *events.Broadcaster
	version string
	dataDir string
	log     *slog.Logger
}

// New serves st; ev is the broadcaster the store publishes to (WatchEvents
// subscribes to it); version and dataDir are reported by Health.
func New(st *store.Store, ev *events.Broadcaster, version, dataDir string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{store: st, events: ev, version: version, dataDir: dataDir, log: log}
}

// Health reports the engine's identity and size; hosts poll it after
// starting an engine.
func (s *Server) Health(ctx context.Context, _ *aimemoryv1.HealthRequest) (*aimemoryv1.HealthResponse, error) {
	return &aimemoryv1.HealthResponse{
		Version:       s.version,
		SchemaVersion: store.SchemaVersion,
		DataDir:       s.dataDir,
		Pid:           int64(os.Getpid()),
		MemoryCount:   uint64(s.store.Count()),
	}, nil
}

func (s *Server) StoreMemory(ctx context.Context, req *aimemoryv1.StoreMemoryRequest) (*aimemoryv1.StoreMemoryResponse, error) {
	resp, err := s.store.StoreMemory(ctx, req)
	return resp, s.status(err)
}

func (s *Server) GetMemories(ctx context.Context, req *aimemoryv1.GetMemoriesRequest) (*aimemoryv1.GetMemoriesResponse, error) {
	resp, err := s.store.GetMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Server) ListMemories(ctx context.Context, req *aimemoryv1.ListMemoriesRequest) (*aimemoryv1.ListMemoriesResponse, error) {
	resp, err := s.store.ListMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Server) SearchMemories(ctx context.Context, req *aimemoryv1.SearchMemoriesRequest) (*aimemoryv1.SearchMemoriesResponse, error) {
	resp, err := s.store.SearchMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Server) TouchMemories(ctx context.Context, req *aimemoryv1.TouchMemoriesRequest) (*aimemoryv1.TouchMemoriesResponse, error) {
	resp, err := s.store.TouchMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Server) UpdateMemory(ctx context.Context, req *aimemoryv1.UpdateMemoryRequest) (*aimemoryv1.UpdateMemoryResponse, error) {
	resp, err := s.store.UpdateMemory(ctx, req)
	return resp, s.status(err)
}

func (s *Server) DeleteMemories(ctx context.Context, req *aimemoryv1.DeleteMemoriesRequest) (*aimemoryv1.DeleteMemoriesResponse, error) {
	resp, err := s.store.DeleteMemories(ctx, req)
	return resp, s.status(err)
}

func (s *Server) CollectGarbage(ctx context.Context, req *aimemoryv1.CollectGarbageRequest) (*aimemoryv1.CollectGarbageResponse, error) {
	resp, err := s.store.CollectGarbage(ctx, req)
	return resp, s.status(err)
}

func (s *Server) Stats(ctx context.Context, _ *aimemoryv1.StatsRequest) (*aimemoryv1.StatsResponse, error) {
	resp, err := s.store.Stats(ctx)
	return resp, s.status(err)
}

func (s *Server) GetLinks(ctx context.Context, req *aimemoryv1.GetLinksRequest) (*aimemoryv1.GetLinksResponse, error) {
	resp, err := s.store.GetLinks(ctx, req)
	return resp, s.status(err)
}

// WatchEvents streams events committed after the call, until the client
// goes away. A client that cannot keep up loses events rather than slowing
// writers; the loss is logged when the stream ends.
func (s *Server) WatchEvents(_ *aimemoryv1.WatchEventsRequest, stream aimemoryv1.Engine_WatchEventsServer) error {
	if s.events == nil {
		return status.Error(codes.Unavailable, "this engine publishes no events")
	}
	sub := s.events.Subscribe(0)
	defer func() {
		sub.Close()
		if n := sub.Dropped(); n > 0 {
			s.log.Warn("event watcher fell behind", "dropped", n)
		}
	}()
	ctx := stream.Context()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-sub.C:
			if err := stream.Send(e); err != nil {
				return err
			}
		}
	}
}

// status maps a store error to a gRPC status: rule violations name the
// field, and anything unexpected is Internal (and logged).
func (s *Server) status(err error) error {
	if err == nil {
		return nil
	}
	var fe *record.FieldError
	switch {
	case errors.As(err, &fe):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, store.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, store.ErrConflict):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, store.ErrAmbiguous):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, store.ErrDenied):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	s.log.Error("engine request failed", "err", err)
	return status.Error(codes.Internal, err.Error())
}
