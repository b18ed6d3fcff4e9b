package server

import (
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/events"
	"github.com/ai-memory/ai-memory/internal/engine/storage"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Events serves the stream of committed writes.
type Events struct {
	aimemoryv1.UnimplementedEventsServer
	events *events.Broadcaster
	st     storage.EventLog
	log    *slog.Logger
}

// resumeBatch is how many logged events a resume reads at a time.
const resumeBatch = 512

// WatchEvents streams events committed after the call, until the client
// goes away; with resume, it first replays the logged events after
// after_seq. A client that cannot keep up loses live events rather than
// slowing writers (the loss is logged when the stream ends); a resuming
// client reconnects from the last seq it saw and loses nothing the log
// still holds. Events the caller may not read are never sent. With liveness_only the stream sends nothing and ends when
// the engine stops or the client goes away.
func (s *Events) WatchEvents(req *aimemoryv1.WatchEventsRequest, stream aimemoryv1.Events_WatchEventsServer) error {
	if req.GetLivenessOnly() {
		<-stream.Context().Done()
		return nil
	}
	if s.events == nil {
		return status.Error(codes.Unavailable, "this engine publishes no events")
	}
	sub := s.events.Subscribe(0) // before reading the log: nothing falls between
	defer func() {
		sub.Close()
		if n := sub.Dropped(); n > 0 {
			s.log.Warn("event watcher fell behind", "dropped", n)
		}
	}()
	ctx := stream.Context()
	// Replayed and live events alike: only what the caller may read
	// (authz: its scope, its own inbox, its family's keyspace).
	readable := authz.Of(ctx).Reader()
	var last uint64
	if req.GetResume() && s.st != nil {
		last = req.GetAfterSeq()
		for {
			evs, err := s.st.EventsAfter(ctx, last, resumeBatch)
			if err != nil {
				return status.Error(codes.Internal, err.Error())
			}
			for _, e := range evs {
				last = e.GetSeq()
				if !readable(e.GetNamespace()) {
					continue
				}
				if err := stream.Send(e); err != nil {
					return err
				}
			}
			if len(evs) < resumeBatch {
				break
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-sub.C:
			if seq := e.GetSeq(); seq != 0 && seq <= last {
				continue // already replayed from the log
			}
			if !readable(e.GetNamespace()) {
				continue
			}
			if err := stream.Send(e); err != nil {
				return err
			}
		}
	}
}
