package server

import (
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	aimemoryv1 "github.com/ai-memory/ai-memory/proto/aimemory/v1"
)

// Events serves the stream of committed writes.
type Events struct {
	aimemoryv1.UnimplementedEventsServer
	events *events.Broadcaster
	log    *slog.Logger
}

// WatchEvents streams events committed after the call, until the client
// goes away. A client that cannot keep up loses events rather than slowing
// writers; the loss is logged when the stream ends.
func (s *Events) WatchEvents(_ *aimemoryv1.WatchEventsRequest, stream aimemoryv1.Events_WatchEventsServer) error {
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
	c, _ := caller.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-sub.C:
			if !c.InScope(e.GetNamespace()) {
				continue // another tenant's change, for a scoped caller
			}
			if err := stream.Send(e); err != nil {
				return err
			}
		}
	}
}
