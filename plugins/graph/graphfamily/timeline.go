package graphfamily

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ai-memory/ai-memory/sdk"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// Timeline limits (family-graph §5).
const (
	defaultTimelineLimit = 200
	maxTimelineLimit     = 1000
)

var timelineArgs = argNames(timelineSchema)

// timelineResult lists a memory's outbound links by valid_from, one event
// per validity interval (a link invalidated and linked again appears
// twice). total is given when the limit cut the list.
type timelineResult struct {
	Count  int       `json:"count"`
	Events []linkRow `json:"events,omitempty"`
	Total  uint32    `json:"total,omitempty"`
}

func parseTimeline(raw []byte) (*aimemoryv1.LinkTimelineRequest, error) {
	a, err := sdk.ParseArgs(raw, timelineArgs)
	if err != nil {
		return nil, err
	}
	req := &aimemoryv1.LinkTimelineRequest{}
	if req.SourceId, err = memoryID(a, "source_id"); err != nil {
		return nil, err
	}
	since, ok, err := timeArg(a, "since", true)
	if err != nil {
		return nil, err
	}
	if ok {
		req.Since = notZero(since)
	}
	until, ok, err := timeArg(a, "until", true)
	if err != nil {
		return nil, err
	}
	if ok {
		req.Until = notZero(until)
	}
	limit, err := a.Integer("limit", defaultTimelineLimit, 1, maxTimelineLimit)
	if err != nil {
		return nil, err
	}
	req.Limit = uint32(limit)
	return req, nil
}

func (s *service) timeline(ctx context.Context, call sdk.Call) (any, error) {
	req, err := parseTimeline(call.Arguments)
	if err != nil {
		return nil, err
	}
	// The id as given first, as in query: only one the engine does not
	// find is resolved as a short id.
	resp, err := s.eng.LinkTimeline(ctx, req)
	if status.Code(err) == codes.NotFound {
		if req.SourceId, err = s.resolve(ctx, req.SourceId); err != nil {
			return nil, err
		}
		resp, err = s.eng.LinkTimeline(ctx, req)
	}
	if err != nil {
		return nil, sdk.EngineError(err)
	}
	out := timelineResult{Count: len(resp.GetEvents())}
	for _, e := range resp.GetEvents() {
		out.Events = append(out.Events, newRow(e.GetLink(), e.GetLink().GetTargetId(), e.GetTarget().GetTitle(), e.GetTarget().GetNamespace()))
	}
	if int(resp.GetTotal()) > out.Count {
		out.Total = resp.GetTotal()
	}
	return out, nil
}
