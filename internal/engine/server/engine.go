// Package server serves the engine's gRPC services (Engine, Memories,
// Corpus, Vectors, Graph, Audit, Events, Archive, Governance, Transfer) over a storage.Backend: it maps storage errors to
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

	"github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/embedder"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Config is what the services serve: a backend, the broadcaster it
// publishes to (WatchEvents subscribes to it; nil = no events), and what
// Health reports.
type Config struct {
	Backend storage.Backend
	// BackendName and Location are what Health reports of the backend
	// ("postgres", user@host:port/db; never a password).
	BackendName, Location string
	Events                *events.Broadcaster
	Version               string
	DataDir               string
	Log                   *slog.Logger
	// Embedder is the data dir's embedding endpoint; nil = none.
	Embedder *embedder.Embedder
	// Chat is the data dir's chat endpoint; nil = none.
	Chat *Chat
	// Webhooks vets subscription targets and seals their secrets.
	Webhooks Webhooks
	// Audit is the engine's audit log (audit.Open); nil: the backend's,
	// its pin kept in memory only.
	Audit *audit.Log
	// Metrics is what the Metrics RPC answers; nil answers none.
	Metrics interface{ Families() ([][]byte, error) }
}

// Register registers every engine service on g.
func Register(g grpc.ServiceRegistrar, c Config) {
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	e := errorMapper{log: c.Log}
	if t, ok := storage.As[storage.ErrorTranslator](c.Backend); ok {
		e.translate = t.TranslateError
	}
	aimemoryv1.RegisterEngineServer(g, &Engine{cfg: c})
	aimemoryv1.RegisterMemoriesServer(g, &Memories{st: c.Backend, errorMapper: e, emb: c.Embedder})
	if c.Chat != nil {
		c.Chat.log = c.Log
	}
	aimemoryv1.RegisterModelsServer(g, &Models{chat: c.Chat})
	aimemoryv1.RegisterVectorsServer(g, &Vectors{st: c.Backend, errorMapper: e, emb: c.Embedder})
	aimemoryv1.RegisterCorpusServer(g, &Corpus{st: c.Backend, errorMapper: e})
	aimemoryv1.RegisterGraphServer(g, &Graph{st: c.Backend, errorMapper: e})
	if c.Audit == nil {
		c.Audit = audit.Unpinned(c.Backend)
	}
	aimemoryv1.RegisterAuditServer(g, &Audit{log: c.Audit, errorMapper: e})
	aimemoryv1.RegisterArchiveServer(g, &Archive{st: c.Backend, errorMapper: e})
	aimemoryv1.RegisterEventsServer(g, &Events{events: c.Events, log: c.Log, st: c.Backend})
	aimemoryv1.RegisterGovernanceServer(g, &Governance{st: c.Backend, errorMapper: e})
	aimemoryv1.RegisterTransferServer(g, &Transfer{st: c.Backend, sealer: c.Webhooks.Sealer, errorMapper: e})
	aimemoryv1.RegisterSubscriptionsServer(g, &Subscriptions{st: c.Backend, hooks: c.Webhooks, errorMapper: e})
	aimemoryv1.RegisterMessagesServer(g, &Messages{st: c.Backend, errorMapper: e})
}

// Engine serves Health.
type Engine struct {
	aimemoryv1.UnimplementedEngineServer
	cfg Config
}

// Health reports the engine's identity and size (the store's count only to
// a grant of every namespace); hosts poll it after starting an engine.
func (s *Engine) Health(ctx context.Context, _ *aimemoryv1.HealthRequest) (*aimemoryv1.HealthResponse, error) {
	count := uint64(0)
	if authz.Of(ctx).Everything() {
		count = uint64(s.cfg.Backend.Count())
	}
	return &aimemoryv1.HealthResponse{
		Version:       s.cfg.Version,
		SchemaVersion: s.cfg.Backend.SchemaVersion(),
		DataDir:       s.cfg.DataDir,
		Pid:           int64(os.Getpid()),
		MemoryCount:   count,
		Backend:       s.cfg.BackendName,
		Location:      s.cfg.Location,
		Capabilities:  capabilities(s.cfg.Backend),
	}, nil
}

// Metrics returns the engine's Prometheus metrics, for a host's /metrics.
// Only a host may read them (hostOnly): they are the data dir's, not a principal's.
func (s *Engine) Metrics(ctx context.Context, _ *aimemoryv1.MetricsRequest) (*aimemoryv1.MetricsResponse, error) {
	if s.cfg.Metrics == nil {
		return &aimemoryv1.MetricsResponse{}, nil
	}
	families, err := s.cfg.Metrics.Families()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &aimemoryv1.MetricsResponse{Families: families}, nil
}

// backupChunk is the size of one Backup message.
const backupChunk = 1 << 20

// Backup streams a consistent copy of the database. Only a host may take
// one (hostOnly): a plugin reaches memory through the record APIs.
func (s *Engine) Backup(_ *aimemoryv1.BackupRequest, stream grpc.ServerStreamingServer[aimemoryv1.BackupChunk]) error {
	w := &chunkWriter{send: func(b []byte) error { return stream.Send(&aimemoryv1.BackupChunk{Data: b}) }}
	if _, err := s.cfg.Backend.Backup(stream.Context(), w); err != nil {
		return status.Error(codes.Internal, "backup: "+err.Error())
	}
	return w.flush()
}

// chunkWriter sends what it is written in backupChunk-sized messages.
type chunkWriter struct {
	buf  []byte
	send func([]byte) error
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(backupChunk-len(c.buf), len(p))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == backupChunk {
			if err := c.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	err := c.send(c.buf)
	c.buf = make([]byte, 0, backupChunk)
	return err
}

// errorMapper maps a storage error to a gRPC status: rule violations name
// the field, and anything unexpected is Internal (and logged).
type errorMapper struct {
	log       *slog.Logger
	translate func(error) error // the backend's (storage.ErrorTranslator); nil: none
}

func (m errorMapper) status(err error) error {
	if err == nil {
		return nil
	}
	if m.translate != nil {
		err = m.translate(err)
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
		// Queued for approval: the status carries the pending action.
		if st, ok := pendingStatus(err); ok {
			return st
		}
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, storage.ErrDecided):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, storage.ErrUnavailable):
		m.log.Warn("engine request failed: storage unavailable", "err", err)
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	m.log.Error("engine request failed", "err", err)
	return status.Error(codes.Internal, err.Error())
}

// capabilities are the backend's flags, when it reports them.
func capabilities(b storage.Backend) []*aimemoryv1.BackendCapability {
	c, ok := storage.As[storage.Capabilities](b)
	if !ok {
		return nil
	}
	var out []*aimemoryv1.BackendCapability
	for _, f := range c.Capabilities() {
		out = append(out, &aimemoryv1.BackendCapability{Name: f.Name, On: f.On, Detail: f.Detail})
	}
	return out
}
